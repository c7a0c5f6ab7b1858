#!/bin/bash
# The gateway's numbers of issue 10, each one command (run from the repository root after a build;
# every process it starts and its temporary directory are gone when it exits):
#   bench/gateway_numbers.sh hop   [MODEL]  gateway hop: the same load straight to one worker
#                                           (smallmind bench --worker) and through a gateway attached
#                                           to it, alternating, at concurrency 1 and 8
#   bench/gateway_numbers.sh soak  [MODEL]  64 clients x 2 min, mixed lengths, 10% client cancels;
#                                           RSS of gateway and workers after warm-up and at the end
#   bench/gateway_numbers.sh kill  [MODEL]  worker kill -9 under 16 clients: which streams fail, and
#                                           how soon a new request succeeds
# MODEL defaults to the default model (builtin:stories260K). Print `uptime` and the CPU with the
# numbers: on a shared machine they are indicative only.
set -u
B=${BIN:-build/bin}
MODEL=${2:-builtin:stories260K}
R=$(mktemp -d "${TMPDIR:-/tmp}/gateway-numbers-XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$R"' EXIT
rss() { awk '/VmRSS/ {print $2" kB"}' /proc/$1/status; }
children() { cat /proc/$1/task/*/children 2>/dev/null; }
line_value() {  # line_value FILE SED_EXPR: waits (bounded) for a line and prints what SED_EXPR keeps
  for _ in $(seq 600); do v=$(sed -n "$2" "$1"); [ -n "$v" ] && { echo "$v"; return; }; sleep 0.1; done
}
gateway_port() { line_value "$1" 's/.*listening on .*:\([0-9]*\)$/\1/p'; }
metrics_port() { line_value "$1" 's/.*metrics on port \([0-9]*\)$/\1/p'; }
summary() {
  python3 -c "import json,sys; r=json.load(sys.stdin); print(f\"$1 ok={r['ok']} err={r['errors']} tok/s={r['tokens_per_s']:.0f} ttft_p50={r['ttft_ms']['p50']:.2f} itl_p50={r['itl_ms']['p50']:.3f} itl_p99={r['itl_ms']['p99']:.3f}\")"
}
echo "== $1 $MODEL $(date -u +%T) $(lscpu | sed -n 's/^Model name: *//p') $(uptime)"
case ${1:-} in
hop)
  "$B/smallmind-worker" --model "$MODEL" --listen "unix:$R/w.sock" --worker-id 0 > "$R/w.log" 2>&1 &
  for _ in $(seq 600); do "$B/smallmind" health --addr "unix:$R/w.sock" > /dev/null 2>&1 && break; sleep 0.1; done
  "$B/smallmind-gateway" --worker-endpoints "unix:$R/w.sock" --port 0 --listen-host 127.0.0.1 \
    --runtime-dir "$R" > "$R/g.log" 2>&1 &
  P=$(gateway_port "$R/g.log")
  for c in 1 8; do
    n=$([ $c = 1 ] && echo 24 || echo 160)
    for round in 1 2 3; do
      for target in "--worker --addr unix:$R/w.sock" "--addr 127.0.0.1:$P"; do
        "$B/smallmind" bench $target --prompt-tokens 32:128 --max-tokens 128 --temperature 0 \
          --requests $n --concurrency $c --seed 1 --json | summary "c=$c round=$round ${target%% --addr*}"
      done
    done
  done
  ;;
soak)
  "$B/smallmind-gateway" --model "$MODEL" --workers 2 --port 0 --listen-host 127.0.0.1 \
    --metrics-port 0 --runtime-dir "$R" > "$R/g.log" 2>&1 &
  G=$!
  P=$(gateway_port "$R/g.log"); M=$(metrics_port "$R/g.log")
  load() {
    "$B/smallmind" bench --addr "127.0.0.1:$P" --prompt-tokens 32:240 --max-tokens 16:256 \
      --duration "$1" --concurrency 64 --cancel-fraction 0.1 --seed "$2" --json
  }
  load 10s 6 > "$R/warm.json"
  echo "RSS after warm-up: gateway $(rss $G); workers: $(for w in $(children $G); do echo -n "$(rss $w); "; done)"
  load 2m 7 > "$R/soak.json"
  echo "RSS at the end:    gateway $(rss $G); workers: $(for w in $(children $G); do echo -n "$(rss $w); "; done)"
  python3 -c "import json; r=json.load(open('$R/soak.json')); print({k: r.get(k) for k in ('started','ok','cancelled','errors','errors_by_status','tokens_per_s','ttft_ms','itl_ms')})"
  curl -s "127.0.0.1:$M/metrics" | grep -E '^smallmind_(requests_total|worker_restarts_total|worker_preemptions_total)' | grep -v ' 0$'
  ;;
kill)
  "$B/smallmind-gateway" --model "$MODEL" --workers 2 --port 0 --listen-host 127.0.0.1 \
    --metrics-port 0 --runtime-dir "$R" > "$R/g.log" 2>&1 &
  P=$(gateway_port "$R/g.log"); M=$(metrics_port "$R/g.log")
  "$B/smallmind" bench --addr "127.0.0.1:$P" --prompt-tokens 32:128 --max-tokens 128:256 \
    --duration 12s --concurrency 16 --seed 9 --json > "$R/kill.json" &
  BENCH=$!
  sleep 5
  VICTIM=$(grep -o 'started worker 0 (pid [0-9]*' "$R/g.log" | grep -o '[0-9]*$' | head -1)
  T0=$(date +%s.%N); kill -9 "$VICTIM"
  echo "killed worker 0 (pid $VICTIM)"
  for i in $(seq 200); do
    if "$B/smallmind" generate --addr "127.0.0.1:$P" "Once upon a time" --max-tokens 8 > /dev/null 2>&1; then
      echo "first new request after the kill succeeded $(python3 -c "print(f'{($(date +%s.%N) - $T0)*1000:.0f} ms')") after it (attempt $i)"
      break
    fi
  done
  wait $BENCH
  python3 -c "import json; r=json.load(open('$R/kill.json')); print('bench:', {k: r.get(k) for k in ('started','ok','cancelled','errors','errors_by_status','first_error')})"
  sleep 2
  curl -s "127.0.0.1:$M/metrics" | grep -E '^smallmind_(worker_restarts_total|worker_up)' | grep -v ' 0$'
  ;;
*)
  sed -n '2,12p' "$0"
  exit 2
  ;;
esac
