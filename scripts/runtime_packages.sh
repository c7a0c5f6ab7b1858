#!/usr/bin/env bash
# Prints the Debian packages that hold the shared libraries the given programs load (ldd, then
# dpkg -S), one per line: the image's runtime stage installs exactly these, so the list follows
# the link lines instead of being kept by hand.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 PROGRAM..." >&2; exit 2; }
libs=$(ldd "$@" | awk '/=> \// { print $3 }' | sort -u)
missing=$(ldd "$@" | awk '/not found/ { print $1 }' | sort -u)
if [ -n "$missing" ]; then
  echo "runtime_packages: not found by the loader: $missing" >&2
  exit 1
fi
for lib in $libs; do
  # /lib is a link to /usr/lib on Debian 12: dpkg knows a file by the path its package installed.
  real=$(readlink -f "$lib")
  dpkg -S "$lib" 2>/dev/null || dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null ||
    { echo "runtime_packages: no package owns $lib" >&2; exit 1; }
done | cut -d: -f1 | sort -u
