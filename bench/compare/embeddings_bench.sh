#!/usr/bin/env bash
# /v1/embeddings beside llama.cpp on the same BERT file (issue 45: 64 inputs of 32 tokens on
# bench-110M-bert): makes the model with smallmind-modelgen into MODEL_DIR (once), starts a
# gateway with one worker of THREADS threads on free ports, runs bench/compare/embeddings_bench.mjs
# (ROUNDS alternating rounds against node-llama-cpp's embedding context) and stops the gateway.
#
#   bench/compare/embeddings_bench.sh BIN_DIR ORACLE_DIR MODEL_DIR ROUNDS THREADS [PRESET [TYPE]]
#   bench/compare/embeddings_bench.sh build/bin /work/oracle /work/bench 3 2 bench-110M-bert f32
#
# ORACLE_DIR holds node-llama-cpp (bench/compare/README.md, "Install the oracle"). PRESET is a
# smallmind-modelgen --bert preset (default bench-110M-bert; bert-tiny for a quick check); a
# -rerank preset (bench-110M-bert-rerank) times /v1/rerank of 64 documents against one query
# beside node-llama-cpp's ranking context instead.
set -euo pipefail

if [[ $# -lt 5 ]]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
bin=$(cd "$1" && pwd) oracle=$2 models=$3 rounds=$4 threads=$5
preset=${6:-bench-110M-bert} type=${7:-f32}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$models"
file="$(cd "$models" && pwd)/$preset-$type.gguf"
[[ -f $file ]] || "$bin/smallmind-modelgen" --bert "$preset" --type "$type" -o "$file" >/dev/null

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
grpc_port=$(free_port) http_port=$(free_port)
runtime=$(mktemp -d)
log="$runtime/gateway.log"
"$bin/smallmind-gateway" --model "$file" --workers 1 --threads-per-worker "$threads" \
  --port "$grpc_port" --http-port "$http_port" --runtime-dir "$runtime" >"$log" 2>&1 &
gateway=$!
cleanup() {
  kill "$gateway" 2>/dev/null || true
  wait "$gateway" 2>/dev/null || true
  rm -rf "$runtime"
}
trap cleanup EXIT
for _ in $(seq 600); do  # bounded: up to a minute for the worker to load the model
  if curl -sf "http://127.0.0.1:$http_port/health" >/dev/null; then break; fi
  if ! kill -0 "$gateway" 2>/dev/null; then
    cat "$log" >&2
    exit 1
  fi
  sleep 0.1
done
mode=()
[[ $preset == *-rerank ]] && mode=(--rerank)
(cd "$oracle" && node "$here/embeddings_bench.mjs" "http://127.0.0.1:$http_port" "$file" \
  "$rounds" "$threads" "${mode[@]}")
