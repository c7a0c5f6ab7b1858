#!/usr/bin/env bash
# Multi-worker scaling through the product's own path: for each worker count W, one gateway that
# spawns W workers (--workers W, each pinned to its own T CPUs with T compute threads, as `make run`
# and compose do), then `smallmind bench` with 8 streams per worker (--concurrency 8W --requests
# 32W --prompt-tokens 16 --max-tokens 128 --temperature 0 --seed 1). Prints aggregate tok/s, tok/s
# per worker and the scaling against the first count. The client runs on CLIENT_CPUS (taskset) so
# it stays off the workers' CPUs; the gateway is left to the scheduler, as in production. Needs
# W * T + a few CPUs: run it on a machine with the cores (docs/benchmarks.md: the 16-core machine's runs).
#
#   bench/scaling.sh BIN_DIR MODEL "WORKER COUNTS" T CLIENT_CPUS ["WORKER FLAGS"]
#   bench/scaling.sh build/bin /tmp/bench-110M-Q8_0.gguf "1 2 4 6" 2 12-15
set -euo pipefail
# shellcheck source=bench/gateway_port.sh
source "$(dirname "$0")/gateway_port.sh"

if [[ $# -lt 5 ]]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
bin=$1 model=$2 counts=$3 threads=$4 client_cpus=$5 worker_flags=${6:-}

dir=$(mktemp -d "${TMPDIR:-/tmp}/scaling.XXXXXX")
gateway_pid=""
cleanup() {
  set +e
  if [[ -n $gateway_pid ]]; then
    kill -INT "$gateway_pid" 2>/dev/null
    wait "$gateway_pid" 2>/dev/null
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

base=""
for w in $counts; do
  : >"$dir/gateway.log"
  gateway_flags=(--model "$model" --workers "$w" --cpus-per-worker "$threads"
    --threads-per-worker "$threads" --port 0 --listen-host 127.0.0.1 --metrics-port -1
    --runtime-dir "$dir" --log-level warn)
  [[ -n $worker_flags ]] && gateway_flags+=(--worker-flags "$worker_flags")
  "$bin/smallmind-gateway" "${gateway_flags[@]}" >"$dir/gateway.log" 2>&1 &
  gateway_pid=$!
  port=$(GatewayPort "$dir/gateway.log" "$gateway_pid") || exit 1
  addr=127.0.0.1:$port
  # Ready when every worker answers: W one-token requests at once, until all pass.
  for i in $(seq 600); do
    "$bin/smallmind" bench --addr "$addr" --concurrency "$w" --requests "$w" --prompt-tokens 4 \
      --max-tokens 1 --json 2>/dev/null | grep -q '"errors": 0' && break
    [[ $i -eq 600 ]] && { echo "workers not ready" >&2; cat "$dir/gateway.log" >&2; exit 1; }
    sleep 0.2
  done
  c=$((8 * w))
  out=$(taskset -c "$client_cpus" "$bin/smallmind" bench --addr "$addr" --concurrency "$c" \
    --requests $((4 * c)) --prompt-tokens 16 --max-tokens 128 --temperature 0 --seed 1)
  tps=$(sed -n 's/^throughput: \([0-9.]*\) tok.*/\1/p' <<<"$out")
  errors=$(sed -n 's/^requests: [0-9]* ok, [0-9]* cancelled, \([0-9]*\) errors.*/\1/p' <<<"$out")
  itl=$(sed -n 's/^itl ms: *p50 \([0-9.]*\) .*p99 \([0-9.]*\) .*/p50 \1 p99 \2/p' <<<"$out")
  base=${base:-$tps}
  awk -v w="$w" -v c="$c" -v t="$tps" -v b="$base" -v e="$errors" -v itl="$itl" \
    'BEGIN { printf "workers %d (concurrency %d): %.0f tok/s, %.0f per worker, %.2fx the first, itl ms %s, errors %s\n",
             w, c, t, t / w, t / b, itl, e }'
  kill -INT "$gateway_pid"
  wait "$gateway_pid" || true
  gateway_pid=""
done
