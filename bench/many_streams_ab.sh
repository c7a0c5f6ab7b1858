#!/usr/bin/env bash
# Two worker configurations measured as bench/many_streams.sh measures one, alternating round by
# round (A, B, A, B, ...) so that both see the same phases of a VM whose speed moves from minute
# to minute; prints every round and each configuration's medians of C=8 / C=1, C=16 / pp128 and the
# engine's tg64x8 / tg64.
#
#   bench/many_streams_ab.sh BIN_DIR MODEL ROUNDS "WORKER FLAGS A" "WORKER FLAGS B"
#   bench/many_streams_ab.sh build/bin /work/bench/bench-110M-Q8_0.gguf 6 \
#     "--threads 2 --kv-dtype f16" "--threads 2 --kv-dtype q8"
set -euo pipefail

if [[ $# -ne 5 ]]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
bin=$1 model=$2 rounds=$3
here=$(cd "$(dirname "$0")" && pwd)

all=""  # every round's lines, printed as they come (see many_streams.sh), then the medians
for r in $(seq "$rounds"); do
  for cfg in A B; do
    flags=$4
    [[ $cfg == B ]] && flags=$5
    line=$("$here/many_streams.sh" "$bin" "$model" 1 "$flags" | sed -n "s/^round 1:/$cfg round $r:/p")
    echo "$line"
    all+="$line"$'\n'
  done
done
printf '%s' "$all" | awk -v a="$4" -v b="$5" '
  { for (i = 1; i <= NF; i++) {
      if ($i == "C8/C1") r8[$1, ++n8[$1]] = $(i + 1)
      if ($i == "C16/pp128") r16[$1, ++n16[$1]] = $(i + 1)
      if ($i == "tg64x8/tg64") re[$1, ++ne[$1]] = $(i + 1)
  } }
  function median(v, cfg, n,   i, j, t, s) {
    for (i = 1; i <= n; i++) s[i] = v[cfg, i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
    return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
  }
  END {
    for (k = 1; k <= 2; k++) {
      c = k == 1 ? "A" : "B"
      printf "%s (%s): median of %d rounds: C8/C1 %.2fx  C16/pp128 %.2fx  engine tg64x8/tg64 %.2fx\n",
             c, k == 1 ? a : b, n8[c], median(r8, c, n8[c]), median(r16, c, n16[c]), median(re, c, ne[c])
    }
  }'
