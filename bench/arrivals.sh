#!/usr/bin/env bash
# Latency under arrivals through the served path (issue 9 item 5): one worker (2 threads) behind a
# gateway (bench/serve_bench.sh); 4 clients stream long outputs (16-token prompts, 256 tokens
# each) and, once they run, 4 more clients send 512-token prompts at once (16 tokens each). Prints
# the running streams' inter-token latency p50 / p99 and p99 / p50, and the long prompts' time to
# first token, for each worker flag set given (one run each, in order).
#
#   bench/arrivals.sh BIN_DIR MODEL "WORKER FLAGS" ["WORKER FLAGS" ...]
#   bench/arrivals.sh build/bin /work/bench/bench-110M-Q8_0.gguf \
#     "--max-step-tokens 256 --max-prefill-tokens-while-decoding 0" \
#     "--max-step-tokens 256 --max-prefill-tokens-while-decoding 32"
#
# The in-process counterpart (the real scheduler and engine, no gRPC; a sweep of settings and the
# step-time table they are chosen from) is build/bin/arrivals_bench.
set -euo pipefail

if [[ $# -lt 3 ]]; then
  sed -n '2,14p' "$0" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
bin=$1 model=$2
shift 2
for flags in "$@"; do
  "$here/serve_bench.sh" "$bin" "$model" "--threads 2 $flags" "
    out=\$(mktemp -d \"\${TMPDIR:-/tmp}/arrivals.XXXXXX\")
    '$bin/smallmind' bench --addr \$ADDR --concurrency 4 --requests 4 --prompt-tokens 16 \
      --max-tokens 256 --temperature 0 --seed 1 --json > \$out/streams.json &
    streams=\$!
    sleep 1  # the streams are decoding by now (their prompts take one step)
    '$bin/smallmind' bench --addr \$ADDR --concurrency 4 --requests 4 --prompt-tokens 512 \
      --max-tokens 16 --temperature 0 --seed 2 --json > \$out/prompts.json
    wait \$streams
    python3 - \"\$out\" '$flags' <<'EOF'
import json, sys
d, flags = sys.argv[1], sys.argv[2]
s = json.load(open(d + '/streams.json'))
p = json.load(open(d + '/prompts.json'))
i = s['itl_ms']
print('%-60s streams ITL p50 %6.1f p99 %6.1f ms  p99/p50 %5.2f | prompts TTFT p50 %5.0f max %5.0f ms | errors %d' % (
    flags, i['p50'], i['p99'], i['p99'] / i['p50'], p['ttft_ms']['p50'], p['ttft_ms']['p99'],
    s['errors'] + p['errors']))
EOF
    rm -rf \$out"
done
