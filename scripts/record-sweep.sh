#!/usr/bin/env bash
# Records a sweep into public/recorded/sweeps/<id>/, where the app's Sweeps page and
# ?embed=sweep&sweep=<id> show it at once, and lists it first in public/recorded/sweeps/index.json.
#   bash scripts/record-sweep.sh ID "TITLE" --preset P --set-grid path=v1,v2,… [--seeds N …]
# Everything after the title goes to `collapse-lab sweep`; a stopped recording continues from the run
# cache when the same command is run again (add --fresh to run every task again).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 3 ]; then
  echo 'usage: bash scripts/record-sweep.sh ID "TITLE" --preset P --set-grid path=v1,v2,… [sweep options]' >&2
  exit 2
fi
id=$1
title=$2
shift 2
if ! [[ $id =~ ^[A-Za-z0-9._-]+$ ]]; then
  echo "record-sweep: the id names a folder: letters, digits, '.', '_' and '-' only" >&2
  exit 2
fi
out="public/recorded/sweeps/$id"
mkdir -p public/recorded/sweeps
rm -rf "$out.tmp"
npx --no-install collapse-lab sweep "$@" --out "$out.tmp"
rm -rf "$out"
mv "$out.tmp" "$out"
node -e '
const fs = require("fs");
const [file, id, title] = process.argv.slice(1);
const index = fs.existsSync(file)
  ? JSON.parse(fs.readFileSync(file, "utf8"))
  : { format: "collapse-lab/recorded-sweeps@1", sweeps: [] };
index.sweeps = [{ id, title }, ...index.sweeps.filter((s) => s.id !== id)];
fs.writeFileSync(file, JSON.stringify(index, null, 1) + "\n");
' public/recorded/sweeps/index.json "$id" "$title"
echo "recorded in $out and listed in public/recorded/sweeps/index.json"
