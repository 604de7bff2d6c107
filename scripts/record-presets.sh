#!/usr/bin/env bash
# Records the RunReport of each preset into public/recorded/, where the app shows it before a
# live run, and its trained policies into public/recorded/<preset>.policies/ (the Play page plays
# them). Usage: bash scripts/record-presets.sh [preset …]   (default: every preset)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p public/recorded
presets=("$@")
[ ${#presets[@]} -gt 0 ] || mapfile -t presets < <(npx --no-install collapse-lab presets 2>/dev/null | awk '{print $1}')
for p in "${presets[@]}"; do
  echo "recording $p …"
  # the report and its policies are replaced together, once the run has finished; --fresh, so the
  # recording's timings are this run's, not those of tasks kept from an earlier one
  out="public/recorded/$p"
  rm -rf "$out.policies.tmp"
  npx --no-install collapse-lab run --preset "$p" --fresh --quiet --out "$out.json.tmp" --policies "$out.policies.tmp"
  rm -rf "$out.policies"
  mv "$out.policies.tmp" "$out.policies"
  mv "$out.json.tmp" "$out.json"
done
