# Sourced by the bench scripts (serve_bench.sh, scaling.sh): GatewayPort LOG PID prints the port a
# gateway started with --port 0 (pid PID, its stdout and stderr in LOG) listens on, once it prints
# it; if the gateway exits first, or 60 s pass, it prints the log or a message to stderr and
# returns 1.
# shellcheck shell=bash
GatewayPort() {
  local log=$1 pid=$2 port=""
  for _ in $(seq 600); do
    port=$(sed -n 's/^smallmind-gateway listening on .*:\([0-9]*\)$/\1/p' "$log")
    [[ -n $port ]] && { echo "$port"; return 0; }
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; return 1; }
    sleep 0.1
  done
  echo "gateway did not start" >&2
  return 1
}

# StopAndRemove DIR PID...: ends each process (SIGTERM, then waits for it) and removes DIR; for an
# EXIT trap under `set -e` (a `wait` on a process the kill ended returns 143).
StopAndRemove() {
  local dir=$1 pid
  shift
  set +e
  for pid in "$@"; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$dir"
}
