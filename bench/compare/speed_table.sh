#!/usr/bin/env bash
# smallmind beside llama.cpp on the same files, round by round: for each model, `smallmind bench
# --offline` (both kernel paths) and bench/compare/llama_cpp_bench.mjs take turns ROUNDS times, so
# both see the same phases of a VM whose speed moves from minute to minute; prints every round and,
# per model, the best pp128 / tg64 of each engine and their ratios (smallmind's parallel path over
# llama.cpp). Models are smallmind-modelgen specs "NAME: FLAGS", made once into MODEL_DIR.
#
#   bench/compare/speed_table.sh BIN_DIR ORACLE_DIR MODEL_DIR ROUNDS THREADS "NAME: FLAGS" ...
#   bench/compare/speed_table.sh build/bin /work/oracle /work/bench 2 2 \
#     "bench-1B-q4_k_m: --preset bench-1B --type q4_k_m" \
#     "bench-1B-iq4_xs: --preset bench-1B --type iq4_xs"
#
# ORACLE_DIR holds node-llama-cpp (bench/compare/README.md, "Install the oracle").
set -euo pipefail

if [[ $# -lt 6 ]]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
bin=$(cd "$1" && pwd) oracle=$2 models=$3 rounds=$4 threads=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$models"

lscpu | sed -n 's/^Model name: *//p' | sed 's/^/cpu: /'
echo "isa flags: $(grep -o -w 'avx2\|avx512f\|avx512_vnni\|avx512_bf16\|amx_tile' /proc/cpuinfo |
  sort -u | tr '\n' ' ')"

results=""
for spec in "$@"; do
  name=${spec%%:*} flags=${spec#*:}
  file="$models/$name.gguf"
  # shellcheck disable=SC2086  # the flags are words
  [[ -f $file ]] || "$bin/smallmind-modelgen" $flags -o "$file" >/dev/null
  for r in $(seq "$rounds"); do
    sm=$("$bin/smallmind" bench --offline --model "$file" --threads "$threads" --repetitions 2 --no-recompute)
    par=$(printf '%s\n' "$sm" | awk -F'|' '$2 ~ /parallel/ {print $4 + 0, $5 + 0}')
    det=$(printf '%s\n' "$sm" | awk -F'|' '$2 ~ /deterministic/ {print $4 + 0, $5 + 0}')
    lc=$(cd "$oracle" && node "$here/llama_cpp_bench.mjs" "$file" "$threads" 2 |
      awk -F'|' '{print $4 + 0, $5 + 0}')
    line="$name round $r: smallmind-par $par smallmind-det $det llama.cpp $lc"
    echo "$line"
    results+="$line"$'\n'
  done
done

echo
echo "| model | size MiB | smallmind pp128 (par / det) | llama.cpp pp128 | ratio | smallmind tg64 (par / det) | llama.cpp tg64 | ratio |"
echo "|---|---|---|---|---|---|---|---|"
for spec in "$@"; do
  name=${spec%%:*}
  size=$(($(stat -c %s "$models/$name.gguf") / 1048576))
  printf '%s' "$results" | awk -v n="$name" -v size="$size" '
    $1 == n {
      if ($5 > pp) pp = $5; if ($6 > tg) tg = $6
      if ($8 > dpp) dpp = $8; if ($9 > dtg) dtg = $9
      if ($11 > lpp) lpp = $11; if ($12 > ltg) ltg = $12
    }
    END {
      printf "| %s | %d | %.1f / %.1f | %.1f | %.2fx | %.1f / %.1f | %.1f | %.2fx |\n",
             n, size, pp, dpp, lpp, pp / lpp, tg, dtg, ltg, tg / ltg
    }'
done
