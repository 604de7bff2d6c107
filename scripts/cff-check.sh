#!/usr/bin/env bash
# Validates CITATION.cff (or FILE) against the Citation File Format schema with cffconvert
# (PyPI, pinned in scripts/cff/requirements.txt), installed on first use into a virtual environment
# in .py-tools/cffconvert (gitignored) and kept. --no-install fails instead of installing.
# Usage: bash scripts/cff-check.sh [--no-install] [FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.py-tools/cffconvert
want=2.0.0
install=1
if [ "${1:-}" = "--no-install" ]; then
  install=0
  shift
fi
file="${1:-CITATION.cff}"
have() { [ -x "$venv/bin/cffconvert" ] && [ "$("$venv/bin/cffconvert" --version 2>/dev/null)" = "$want" ]; }
if ! have; then
  if [ "$install" = 0 ]; then
    echo "cff-check: cffconvert $want is not installed in $venv (bash scripts/cff-check.sh installs it)" >&2
    exit 2
  fi
  echo "cff-check: installing cffconvert $want into $venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r scripts/cff/requirements.txt
fi
"$venv/bin/cffconvert" --validate --infile "$file"
