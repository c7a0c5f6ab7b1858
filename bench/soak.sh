#!/usr/bin/env bash
# Long soak (issue 40): a gateway spawning 2 workers of MODEL, CLIENTS concurrent gRPC streams for
# MINUTES (`smallmind bench --duration`, a quarter of them cancelled mid-stream), and the resident
# memory (VmRSS) of the gateway and of each worker sampled every SAMPLE seconds. Prints one line a
# sample, then the first and last samples and the growth per minute over the second half, which
# says whether memory levels off (a leak keeps growing at the same rate; a warm-up does not).
#
#   bench/soak.sh BIN_DIR MINUTES [CLIENTS=64] [MODEL=builtin:stories260K] [SAMPLE=10]
#   bench/soak.sh build/bin 20            # the issue's 64 clients x 20 minutes
#   bench/soak.sh build/bin 2 64          # a short one
set -euo pipefail
# shellcheck source=bench/gateway_port.sh
source "$(dirname "$0")/gateway_port.sh"

if [[ $# -lt 2 ]]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
bin=$1 minutes=$2 clients=${3:-64} model=${4:-builtin:stories260K} sample=${5:-10}

dir=$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")
gateway_pid="" bench_pid=""
# shellcheck disable=SC2086  # the pids are words or nothing
cleanup() { StopAndRemove "$dir" $bench_pid $gateway_pid; }
trap cleanup EXIT

: >"$dir/gateway.log"
TMPDIR=$dir "$bin/smallmind-gateway" --model "$model" --workers 2 --port 0 \
  --listen-host 127.0.0.1 --log-level warn >"$dir/gateway.log" 2>&1 &
gateway_pid=$!
port=$(GatewayPort "$dir/gateway.log" "$gateway_pid") || exit 1
addr=127.0.0.1:$port
for i in $(seq 600); do
  "$bin/smallmind" bench --addr "$addr" --concurrency 1 --requests 1 --prompt-tokens 4 \
    --max-tokens 1 --json >/dev/null 2>&1 && break
  [[ $i -eq 600 ]] && { echo "workers not ready" >&2; exit 1; }
  sleep 0.2
done

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
workers() { pgrep -P "$gateway_pid" -x smallmind-worke || true; }  # comm is 15 characters

"$bin/smallmind" bench --addr "$addr" --concurrency "$clients" --duration "${minutes}m" \
  --prompt-tokens 32 --max-tokens 64 --cancel-fraction 0.25 --seed 1 >"$dir/bench.txt" 2>&1 &
bench_pid=$!
start=$(date +%s)
echo "seconds gateway_rss_mb worker_rss_mb..."
samples=""
while kill -0 "$bench_pid" 2>/dev/null; do
  now=$(($(date +%s) - start))
  line="$now $(awk -v k="$(rss_kb "$gateway_pid")" 'BEGIN {printf "%.1f", k / 1024}')"
  for w in $(workers); do line+=" $(awk -v k="$(rss_kb "$w")" 'BEGIN {printf "%.1f", k / 1024}')"; done
  echo "$line"
  samples+="$line"$'\n'
  sleep "$sample"
done
wait "$bench_pid" || { cat "$dir/bench.txt" >&2; exit 1; }
bench_pid=""
grep -E '^(requests|throughput|errors|ttft|itl)' "$dir/bench.txt" || cat "$dir/bench.txt"
printf '%s' "$samples" | awk '
  { t[NR] = $1; for (i = 2; i <= NF; i++) v[NR, i] = $i; if (NF > cols) cols = NF }
  END {
    if (NR < 3) { print "too few samples"; exit }
    h = int((NR + 1) / 2)
    for (i = 2; i <= cols; i++) {
      name = i == 2 ? "gateway" : "worker " (i - 3)
      per_min = (v[NR, i] - v[h, i]) / ((t[NR] - t[h]) / 60)
      printf "%s: %.1f MB at %d s, %.1f MB at %d s, %.1f MB at %d s; second half %+.2f MB/min\n",
             name, v[1, i], t[1], v[h, i], t[h], v[NR, i], t[NR], per_min
    }
  }'
