#!/usr/bin/env bash
# Speculative decoding A/B through the served path: one worker without and one with the given
# speculation flags, alternating round by round (off, on, off, on, ...) so both see the same
# phases of a VM whose speed moves; each round runs the same `smallmind bench` load (BENCH ARGS,
# e.g. a concurrency, a prompt list and greedy or seeded sampling) and prints its tok/s and the
# drafted/accepted tokens; the last line gives the medians and their ratio. docs/speculation.md
# has the numbers.
#
#   bench/speculation_ab.sh BIN_DIR MODEL ROUNDS "WORKER FLAGS" "SPEC FLAGS" "BENCH ARGS"
#   bench/speculation_ab.sh build/bin builtin:stories260K 3 "--threads 1" "--spec-ngram 3" \
#     "--concurrency 1 --requests 16 --prompt-list bench/data/retell.txt --max-tokens 200 \
#      --temperature 0 --seed 1"
set -euo pipefail

if [[ $# -ne 6 ]]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
bin=$1 model=$2 rounds=$3 worker_flags=$4 spec_flags=$5 bench_args=$6
here=$(cd "$(dirname "$0")" && pwd)

off="" on=""
for r in $(seq "$rounds"); do
  for cfg in off on; do
    flags=$worker_flags
    [[ $cfg == on ]] && flags="$worker_flags $spec_flags"
    out=$("$here/serve_bench.sh" "$bin" "$model" "$flags" \
      "$bin/smallmind bench --addr \$ADDR $bench_args --json")
    tps=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens_per_s"])' <<<"$out")
    spec=$(python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["accepted_draft_tokens"], "of", j["draft_tokens"], "drafts accepted")' <<<"$out")
    echo "round $r $cfg: $tps tok/s ($spec)"
    [[ $cfg == off ]] && off+="$tps " || on+="$tps "
  done
done
python3 - "$off" "$on" <<'PY'
import statistics, sys
off = [float(x) for x in sys.argv[1].split()]
on = [float(x) for x in sys.argv[2].split()]
a, b = statistics.median(off), statistics.median(on)
print(f"median tok/s: off {a:.1f}, on {b:.1f}, on/off {b / a:.2f}")
PY
