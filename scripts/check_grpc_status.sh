#!/usr/bin/env bash
# House rule (STYLE §6, issue 8 item 9): a grpc::Status is built only in shared/grpc_status.cc;
# everything else returns shared::Status and converts at the edge with shared::ToGrpcStatus.
# Fails, listing the lines, when a tracked C++ file outside tests/ constructs one (grpc::Status(..),
# grpc::Status{..}, grpc::Status::OK / ::CANCELLED, or a variable built from a grpc::StatusCode).
set -euo pipefail
cd "$(dirname "$0")/.."
# Files still being converted by their owners, each with the issue that converts it.
allowed=(
  shared/grpc_status.cc
)
pattern='grpc::Status[[:space:]]*[({]|grpc::Status::(OK|CANCELLED)\b|grpc::Status[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*[({][[:space:]]*grpc::StatusCode'
mapfile -t files < <(git ls-files '*.cc' '*.h' | grep -v '^tests/')
bad=0
for f in "${files[@]}"; do
  skip=0
  for a in "${allowed[@]}"; do [ "$f" = "$a" ] && skip=1; done
  [ $skip -eq 1 ] && continue
  # Line comments are dropped first: prose may name grpc::Status.
  hits=$(sed 's|//.*$||' "$f" | grep -nE "$pattern" || true)
  if [ -n "$hits" ]; then
    printf '%s\n' "$hits" | sed "s|^|  $f:|"
    bad=1
  fi
done
if [ $bad -ne 0 ]; then
  echo "check_grpc_status: grpc::Status is built outside shared/grpc_status.cc (return a"
  echo "shared::Status and convert with shared::ToGrpcStatus at the edge)"
  exit 1
fi
echo "check_grpc_status: ${#files[@]} files build no grpc::Status outside shared/grpc_status.cc"
