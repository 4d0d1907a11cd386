# make course : set up .venv, build the notebooks, render both editions of the book (if Quarto is there)
# make test   : set up .venv and run the whole test suite (what CI runs)
VENV ?= .venv
PY := $(VENV)/bin/python
export VENV

.PHONY: course setup notebooks book test
course: notebooks book

setup: $(VENV)/.installed
$(VENV)/.installed: requirements.txt pyproject.toml
	bash scripts/setup.sh

notebooks: setup
	$(PY) -m grader build

book: setup
	bash scripts/render.sh

test: setup
	$(PY) -m pytest tests solutions --nbval --nbval-current-env
