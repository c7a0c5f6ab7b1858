#!/usr/bin/env bash
# Issue 9 item 4 in one command: per round, the engine's own pp128, tg64, tg64x8 and tg64x16@d48
# (decode_bench)
# and then 1, 8 and 16 concurrent streams through a gateway and one worker (bench/serve_bench.sh,
# `smallmind bench --concurrency C --requests 4C --prompt-tokens 16 --max-tokens 128 --temperature
# 0 --seed 1`), all from BIN_DIR; prints each round's ratios (C=8 / C=1, C=16 / pp128, the
# engine's tg64x8 / tg64 and its tg64x16@d48 / pp128, 16 streams at the served C=16 run's depths,
# measured within the same minute) and their medians. On a shared VM whose
# speed moves from second to second only these per-round ratios and their medians mean anything.
#
#   bench/many_streams.sh BIN_DIR MODEL ROUNDS ["WORKER FLAGS"]
#   bench/many_streams.sh build/bin /work/bench/bench-110M-Q8_0.gguf 5 "--threads 2"
#
# The engine runs the kernel set the worker flags name (--isa), the best one the CPU has by default.
set -euo pipefail

if [[ $# -lt 3 ]]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
bin=$1 model=$2 rounds=$3 worker_flags=${4:-"--threads 2"}
threads=$(sed -n 's/.*--threads \([0-9]*\).*/\1/p' <<<"$worker_flags")
isa=$(sed -n 's/.*--isa[ =]\([a-z0-9]*\).*/\1/p' <<<"$worker_flags")
here=$(cd "$(dirname "$0")" && pwd)

served() {  # tok/s of C concurrent streams
  "$here/serve_bench.sh" "$bin" "$model" "$worker_flags" \
    "$bin/smallmind bench --addr \$ADDR --concurrency $1 --requests $((4 * $1)) \
       --prompt-tokens 16 --max-tokens 128 --temperature 0 --seed 1" 2>&1 |
    sed -n 's/^throughput: \([0-9.]*\) tok.*/\1/p'
}

# Each round's line is printed as soon as it is measured (awk reading a pipe would hold it back in
# its input buffer until the end), then the medians of all of them.
all=""
for r in $(seq "$rounds"); do
  # The engine alone in the same minute: pp128, and tg64x8 / tg64 (8 streams vs 1 without the
  # gateway, gRPC, the client or any prompt), which bounds what the served C8/C1 can reach, and
  # tg64x16@d48 (16 streams at the served C=16 run's depths), which bounds C16/pp128 likewise.
  engine=$("$bin/decode_bench" --model="$model" --threads="${threads:-2}" --isa="${isa:-best}" --paths=par \
    --benchmark_filter='^(pp128|tg64|tg64x8|tg64x16@d48)/' --benchmark_min_time=1s 2>/dev/null |
    awk -F'|' '/^\| / && /par\// {split($4, t, " "); split($5, a, " "); v[t[1]] = a[1]}
               END { print v["pp128"], v["tg64"], v["tg64x8"], v["tg64x16@d48"] }')
  read -r pp tg1 tg8 tg16 <<<"$engine"
  c1=$(served 1) c8=$(served 8) c16=$(served 16)
  line=$(awk -v r="$r" -v pp="$pp" -v tg1="$tg1" -v tg8="$tg8" -v c1="$c1" -v c8="$c8" -v c16="$c16" -v tg16="$tg16" \
    -v load="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN { printf "round %d: pp128 %s  C=1 %s  C=8 %s  C=16 %s tok/s  C8/C1 %.2f  C16/pp128 %.2f  engine tg64x8/tg64 %.2f  engine tg64x16@d48/pp128 %.2f  load %s\n",
             r, pp, c1, c8, c16, c8 / c1, c16 / pp, tg8 / tg1, tg16 / pp, load }')
  echo "$line"
  all+="$line"$'\n'
done
printf '%s' "$all" | awk '
  { for (i = 1; i <= NF; i++) {
      if ($i == "C8/C1") a[NR] = $(i + 1)
      if ($i == "C16/pp128") b[NR] = $(i + 1)
      if ($i == "tg64x8/tg64") e[NR] = $(i + 1)
      if ($i == "tg64x16@d48/pp128") d[NR] = $(i + 1)
    } }
  function median(v, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  END {
    printf "median of %d rounds: C8/C1 %.2fx  C16/pp128 %.2fx  engine tg64x8/tg64 %.2fx  engine tg64x16@d48/pp128 %.2fx\n",
           NR, median(a, NR), median(b, NR), median(e, NR), median(d, NR)
  }'
