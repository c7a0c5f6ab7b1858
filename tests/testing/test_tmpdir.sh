#!/usr/bin/env bash
# The ctest fixture around the whole suite (tests/CMakeLists.txt): every test runs with TMPDIR set
# to DIR, a folder in the build tree. `setup DIR` empties it before the first test; `check DIR` runs
# after the last one and fails, listing what is there, when any test left a file or directory
# behind (the leftovers stay for inspection until the next setup).
set -euo pipefail
usage="usage: test_tmpdir.sh setup|check DIR"
mode=${1:?$usage}
dir=${2:?$usage}
case "$dir" in
  / | "" | /tmp | /tmp/) echo "test_tmpdir: refusing to manage $dir" >&2; exit 2 ;;
esac
case "$mode" in
  setup)
    rm -rf -- "$dir"
    mkdir -p -- "$dir"
    ;;
  check)
    if [ ! -d "$dir" ]; then
      echo "test_tmpdir: $dir is gone (a test removed its TMPDIR?)"
      exit 1
    fi
    left=$(find "$dir" -mindepth 1 -maxdepth 3 | sort)
    if [ -n "$left" ]; then
      echo "test_tmpdir: tests left these behind in TMPDIR=$dir:"
      echo "$left"
      exit 1
    fi
    echo "test_tmpdir: nothing left in $dir"
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
