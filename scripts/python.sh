#!/usr/bin/env bash
# Creates a virtual environment in .py/venv (gitignored) with the collapse-lab Python package
# (python/) and its test environment, pinned exactly in python/requirements-test.txt, from PyPI.
# Idempotent: the pinned environment is installed again only when that file changes; the package
# itself is rebuilt from the working tree every time (a few seconds, nothing downloaded).
# Usage: bash scripts/python.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-.py}"
venv="$dir/venv"
req=python/requirements-test.txt
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "python: the package needs Python 3.10 or newer; python3 is $(python3 --version 2>&1)" >&2
  exit 1
fi
stamp="$venv/.requirements-test.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "python: installing the test environment ($req) into $venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
  echo "$want" >"$stamp"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
  --force-reinstall ./python
echo "python: ready: $venv/bin/python ($("$venv/bin/python" -c 'import collapse_lab; print("collapse_lab", collapse_lab.__version__)'))"
