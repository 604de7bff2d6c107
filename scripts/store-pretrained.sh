#!/usr/bin/env bash
# Writes the store of pretrained models, public/pretrained/: every pretraining job of each
# preset's own seeds, pretrained on wasm in parallel worker threads, one file per job plus
# index.json. Re-runnable: models already stored (and intact) are kept, so after a preset changes
# only its new jobs pretrain. --prune then removes models that no current preset uses.
# Usage: bash scripts/store-pretrained.sh [--prune] [--parallel=N] [preset …]   (default: every preset)
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
for a in "$@"; do
  case "$a" in
    --*) args+=("$a") ;; # passed on to `collapse-lab store`
    *) args+=(--preset "$a") ;;
  esac
done
exec npx --no-install collapse-lab store "${args[@]}"
