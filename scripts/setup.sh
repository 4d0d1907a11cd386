#!/usr/bin/env bash
# Create the virtual environment with everything in requirements.txt, the project itself
# (editable) and a `python3` Jupyter kernel that points at it.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv}

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip install --disable-pip-version-check --quiet)

if ! "${pip[@]}" -r requirements.txt; then
  # quarto-cli's installer downloads Quarto from GitHub; offline machines (CI) cannot reach it.
  echo >&2
  echo ">>> quarto-cli could not be installed (it downloads Quarto from GitHub at install time)." >&2
  echo ">>> Installing everything else; the book render will be skipped." >&2
  echo ">>> To render the book, install Quarto from https://quarto.org/docs/get-started/" >&2
  grep -v '^quarto-cli' requirements.txt > "$venv/requirements-without-quarto.txt"
  "${pip[@]}" -r "$venv/requirements-without-quarto.txt"
fi
"${pip[@]}" --no-deps -e .
"$venv/bin/python" -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)" >/dev/null
touch "$venv/.installed"
echo "environment ready: $venv"
