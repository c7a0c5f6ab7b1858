#!/usr/bin/env bash
# Regenerates tests/worker/tokenizer/gguf/testdata/llama_cpp_ids.json: the test binary writes its
# vocabulary-only GGUF files and inputs to a temporary folder, llama.cpp (node-llama-cpp from npm,
# installed in ORACLE_DIR) tokenizes them. Run from the repository root after building
# worker_tokenizer_gguf_test:
#
#   cmake --build build --target worker_tokenizer_gguf_test
#   ORACLE_DIR=/path/with/node_modules bench/compare/tokenizer_oracle.sh
#
# ORACLE_DIR defaults to a temporary folder where `npm i -E node-llama-cpp@3.22.1` runs first.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$repo/build}
dump=$(mktemp -d)
trap 'rm -rf "$dump"' EXIT
if [[ -z "${ORACLE_DIR:-}" ]]; then
  ORACLE_DIR=$dump/npm
  mkdir -p "$ORACLE_DIR"
  (cd "$ORACLE_DIR" && npm i -E --silent node-llama-cpp@3.22.1)
fi
SMALLMIND_TOKENIZER_ORACLE_DUMP=$dump "$build/bin/worker_tokenizer_gguf_test" \
  --gtest_filter='LlamaCppOracleDump.*' > /dev/null
out=$repo/tests/worker/tokenizer/gguf/testdata/llama_cpp_ids.json
(cd "$ORACLE_DIR" && node "$repo/bench/compare/tokenizer_oracle.mjs" "$dump") > "$out.new" 2> "$dump/node.log" ||
  { cat "$dump/node.log" >&2; exit 1; }
mv "$out.new" "$out"
echo "wrote $out"
