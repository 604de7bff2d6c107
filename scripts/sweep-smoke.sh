#!/usr/bin/env bash
# Runs the smoke preset on many seeds (one seed per run) and over extreme knobs, and says which
# runs did not complete. A run must never fail because a diagnostic could not be computed.
#   bash scripts/sweep-smoke.sh [first-seed] [last-seed]     (default 0 49)
set -u
cd "$(dirname "$0")/.."
first=${1:-0}
last=${2:-49}
failed=0
run() {
  local label=$1
  shift
  local t0=$SECONDS
  # the run cache off: each run must compute everything, not continue from an earlier one
  if out=$(COLLAPSE_LAB_CACHE=off node bin/collapse-lab.mjs run --preset persuasion-smoke --quiet "$@" 2>&1); then
    echo "ok     $label ($((SECONDS - t0)) s)"
  else
    echo "FAILED $label ($((SECONDS - t0)) s): $(echo "$out" | grep -m1 -i error)"
    failed=$((failed + 1))
  fi
}
for s in $(seq "$first" "$last"); do run "seed $s" --seeds 1 --seed-base "$s"; done
run "γ = 1" --set simulator.gamma=1
run "γ = 1000" --set simulator.gamma=1000
run "φ = 0" --set vs.fidelity=0
run "φ = 1" --set vs.fidelity=1
run "k = 1" --set vs.k=1
run "pool size 1" --set population.poolSize=1
run "one seed" --seeds 1
echo "$failed run(s) failed"
[ "$failed" -eq 0 ]
