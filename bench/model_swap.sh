#!/usr/bin/env bash
# model_swap.sh BIN MODEL ROUNDS ["WORKER FLAGS"]: hot-swap first-token latency (docs/models.md).
# One gateway serves MODEL under two names (a, b; 1 worker each) with --memory-budget holding only
# one, so every request to the other name unloads the idle one and loads its own. Per round: a
# 1-token completion to the unloaded name (the swap: its first token includes the load), then one
# to the same, now loaded, name. Prints each, the gateway's own "loaded in N ms" for the load, and
# the medians. BIN is a build's bin/ directory.
set -euo pipefail
bin=$1 model=$2 rounds=$3 worker_flags=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/gateway_port.sh
source "$here/gateway_port.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/model-swap.XXXXXX")
log=$dir/gateway.log
kv=${KV_MB:-64}  # MiB per model (KV_MB=): the budget below holds one model's pool and file, never two
budget=$(( ($(stat -c %s "$model" 2>/dev/null || echo 0) >> 20) + kv + kv / 2 ))
"$bin/smallmind-gateway" --port 0 --http-port 0 --workers 1 --runtime-dir "$dir" \
  --model "a=$model,kv-memory-mb=$kv" --model "b=$model,kv-memory-mb=$kv" \
  --memory-budget "$budget" ${worker_flags:+--worker-flags="$worker_flags"} > "$log" 2>&1 &
pid=$!
trap '[[ -n ${KEEP_LOG:-} ]] && cp "$log" "$KEEP_LOG"; StopAndRemove "$dir" "$pid"' EXIT
GatewayPort "$log" "$pid" > /dev/null
http=$(sed -n 's/^smallmind-gateway HTTP bound to .*, HTTP at \(.*\)$/\1/p' "$log")
ask() {  # prints the seconds one 1-token completion to model $1 took, end to end
  curl -sS -o /dev/null -w '%{time_total}\n' "$http/v1/completions" \
    -d "{\"model\":\"$1\",\"prompt\":\"Once upon a time\",\"max_tokens\":1,\"temperature\":0}"
}
swaps=() warm=()
for ((i = 0; i < rounds; i++)); do
  name=$([[ $((i % 2)) == 0 ]] && echo b || echo a)
  swaps+=("$(ask "$name")")
  warm+=("$(ask "$name")")
  printf 'round %d: %s swap %.1f ms, loaded %.1f ms\n' "$i" "$name" \
    "$(echo "${swaps[-1]} * 1000" | bc -l)" "$(echo "${warm[-1]} * 1000" | bc -l)"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)] * 1000}'; }
loads=$(sed -n 's/.*model `[ab]` loaded in \([0-9]*\) ms.*/\1/p' "$log" | tail -n +2)
echo "median first token after a swap: $(median "${swaps[@]}") ms; on the loaded model: $(median "${warm[@]}") ms"
# shellcheck disable=SC2086
echo "median load (spawn to model info, the gateway's log): $(median $(for l in $loads; do echo "$l / 1000" | bc -l; done)) ms over $(echo $loads | wc -w) loads"
