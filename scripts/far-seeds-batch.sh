#!/usr/bin/env bash
# One batch of five far seeds of a preset (docs/runs/README.md): stores its models, runs it with its
# policies, then runs the γ = 1 ablation (single, vs, population) on the same stored models. Each
# run keeps its finished tasks in tmp/far-seeds/, so an interrupted batch continues where it
# stopped when started again. Usage: bash scripts/far-seeds-batch.sh PRESET SEED_BASE
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] && [[ $2 =~ ^[0-9]+$ ]] || { echo "usage: bash scripts/far-seeds-batch.sh PRESET SEED_BASE" >&2; exit 2; }
preset=$1
s=$2
e=$((s + 4))
out=docs/runs/$preset
work=tmp/far-seeds/$preset
mkdir -p "$out" "$work"
cli() { npx --no-install collapse-lab "$@"; }
echo "== store $preset $s-$e ($(date -u))"
cli store --preset "$preset" --seeds 5 --seed-base "$s"
echo "== run $preset $s-$e ($(date -u))"
cli run --preset "$preset" --seeds 5 --seed-base "$s" --resume "$work/r$s" \
  --out "$out/seeds-$s-$e.json" --policies "$out/seeds-$s-$e.policies"
echo "== gamma=1 $preset $s-$e ($(date -u))"
cli run --preset "$preset" --seeds 5 --seed-base "$s" --resume "$work/g$s" \
  --set simulator.gamma=1 --set 'conditions=["single","vs","population"]' --out "$out/gamma1-seeds-$s-$e.json"
echo "== done ($(date -u))"
