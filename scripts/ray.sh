#!/usr/bin/env bash
# Installs Ray (ray[default] 2.60.0, from PyPI) into a virtual environment in .ray/venv (gitignored),
# for the tests of `collapse-lab ray …` and the relay, which start a real single-node Ray head on
# 127.0.0.1. Idempotent: an intact install is kept. Usage: bash scripts/ray.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-.ray}"
venv="$dir/venv"
want=2.60.0
if [ -x "$venv/bin/ray" ] && [ "$("$venv/bin/python" -c 'import ray; print(ray.__version__)' 2>/dev/null)" = "$want" ]; then
  echo "ray: ready: $venv/bin/ray ($want)"
  exit 0
fi
echo "ray: installing ray[default] $want into $venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r scripts/ray/requirements.txt
echo "ray: ready: $venv/bin/ray ($("$venv/bin/python" -c 'import ray; print(ray.__version__)'))"
