#!/usr/bin/env bash
# Runs a shell command against one smallmind-worker behind a gateway, both from BIN_DIR, so two
# builds can be measured side by side (A/B) through the whole served path (client -> gateway ->
# worker -> engine). The worker is started on its own (so it takes any worker flag, e.g.
# --max-step-tokens) on a Unix socket in a private temp directory, the gateway attaches to it on a
# free port, and the command runs with $ADDR set to the gateway's host:port (and $WORKER_ADDR to
# the worker's, for `smallmind bench --worker`). Both are stopped and the directory removed
# afterwards.
#
#   bench/serve_bench.sh BIN_DIR MODEL "WORKER FLAGS" 'COMMAND'
#   bench/serve_bench.sh build/bin /work/bench/bench-110M-Q8_0.gguf "--threads 2" \
#     'build/bin/smallmind bench --addr $ADDR --concurrency 8 --requests 32 --prompt-tokens 16 \
#        --max-tokens 128 --temperature 0 --seed 1'
#
# bench/arrivals.sh uses it for the latency-under-arrivals measurement (issue 9 item 5).
set -euo pipefail
# shellcheck source=bench/gateway_port.sh
source "$(dirname "$0")/gateway_port.sh"

if [[ $# -ne 4 ]]; then
  sed -n '2,14p' "$0" >&2
  exit 2
fi
bin=$1 model=$2 worker_flags=$3 command=$4

dir=$(mktemp -d "${TMPDIR:-/tmp}/serve-bench.XXXXXX")
worker_pid="" gateway_pid=""
# Runs under `set -e` from the EXIT trap: a `wait` on a process the kill ended returns 143, which
# must not end the cleanup before the worker is stopped and the directory removed.
cleanup() {
  set +e
  for pid in $gateway_pid $worker_pid; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$dir"
}
trap cleanup EXIT

# The logs exist before either process starts: the loops below read them at once, before the
# background shells may have opened their redirections.
: >"$dir/worker.log"
: >"$dir/gateway.log"
# shellcheck disable=SC2086  # worker_flags is a list of flags
"$bin/smallmind-worker" --model "$model" --listen "unix:$dir/worker.sock" --kv-segment none \
  --log-level warn $worker_flags >"$dir/worker.log" 2>&1 &
worker_pid=$!
"$bin/smallmind-gateway" --worker-endpoints "unix:$dir/worker.sock" --port 0 \
  --listen-host 127.0.0.1 >"$dir/gateway.log" 2>&1 &
gateway_pid=$!

# The gateway prints its port once it listens; the worker is ready when a 1-token request passes.
port=$(GatewayPort "$dir/gateway.log" "$gateway_pid") || exit 1
export ADDR=127.0.0.1:$port WORKER_ADDR=unix:$dir/worker.sock
for i in $(seq 600); do
  "$bin/smallmind" bench --addr "$ADDR" --concurrency 1 --requests 1 --prompt-tokens 4 \
    --max-tokens 1 --json >/dev/null 2>&1 && break
  kill -0 "$worker_pid" 2>/dev/null || { cat "$dir/worker.log" >&2; exit 1; }
  [[ $i -eq 600 ]] && { echo "worker not ready" >&2; exit 1; }
  sleep 0.2
done
bash -c "$command"
