#!/usr/bin/env bash
# Render both editions: the student edition into _book/, the answer edition into _book-answer/.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv}
export PATH="$PWD/$venv/bin:$PATH" QUARTO_PYTHON="$PWD/$venv/bin/python"

if ! command -v quarto >/dev/null 2>&1; then
  echo "Quarto is not installed, so the book was not rendered (the notebooks were built)."
  echo "Install it from https://quarto.org/docs/get-started/ (or 'QUARTO=1 make setup' where GitHub is reachable),"
  echo "then run 'make course' again (it never touches your own copy in work/ or submissions/),"
  echo "or 'quarto preview' to read the book while you edit."
  exit 0
fi
quarto render                    # student edition -> _book/
quarto render --profile answer   # answer edition  -> _book-answer/
echo "student edition: _book/index.html   answer edition: _book-answer/index.html"
