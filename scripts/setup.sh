#!/usr/bin/env bash
# Create the virtual environment with everything in requirements.txt, the project itself
# (editable) and a `python3` Jupyter kernel that points at it.
#
# Quarto is opt-in: `QUARTO=1 make setup` (or `QUARTO=1 bash scripts/setup.sh`) also tries
# requirements-book.txt (quarto-cli, whose installer downloads Quarto from GitHub). That attempt is
# logged to $VENV/quarto-install.log and reported in one line; it never fails the setup. Any other
# install failure is a real one and stops the setup with pip's own message.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv}

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip install --disable-pip-version-check --quiet)

# quarto-cli is installed only on request, even while requirements.txt still lists it.
grep -v '^[[:space:]]*quarto-cli' requirements.txt > "$venv/requirements-core.txt"
"${pip[@]}" -r "$venv/requirements-core.txt"
"${pip[@]}" --no-deps -e .
"$venv/bin/python" -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)" >/dev/null

if [ "${QUARTO:-0}" = 1 ]; then
  log="$venv/quarto-install.log"
  if "${pip[@]}" -r requirements-book.txt >"$log" 2>&1; then
    echo "Quarto installed from PyPI (quarto-cli); log: $log"
  else
    echo "Quarto could not be installed from PyPI (quarto-cli downloads it from GitHub; offline?); the book render will be skipped. Install Quarto from https://quarto.org/docs/get-started/ — details: $log" >&2
  fi
fi
touch "$venv/.installed"
echo "environment ready: $venv"
