# make course : set up .venv, build the notebooks, render both editions of the book (if Quarto is there)
# make start  : create your own copy of the exercise (work/lesson07.ipynb, or submissions/$(NAME)/ with NAME=...)
# make release: write the student release (no answer key) to build/release, or OUT=DIR
# make test   : set up .venv and run the whole test suite (what CI runs)
# QUARTO=1 make setup : also try to install Quarto from PyPI (quarto-cli; needs GitHub access)
VENV ?= .venv
PY := $(VENV)/bin/python
LESSON ?= lesson07
BUILD_FLAGS ?=
export VENV

.PHONY: course setup notebooks book test start release
ifeq ($(QUARTO),1)
.PHONY: $(VENV)/.installed   # asked for Quarto: run the setup again even if the environment is ready
endif
course: notebooks book

setup: $(VENV)/.installed
$(VENV)/.installed: requirements.txt pyproject.toml
	bash scripts/setup.sh

notebooks: setup
	$(PY) -m grader build $(BUILD_FLAGS)

book: setup
	bash scripts/render.sh

start: setup
	$(PY) -m grader start $(LESSON) $(if $(NAME),--name "$(NAME)")

release: setup
	$(PY) -m grader release --out $(or $(OUT),build/release)

test: setup
	$(PY) -m pytest tests solutions --nbval --nbval-current-env
