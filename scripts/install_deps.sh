#!/usr/bin/env bash
# Installs the Debian 12 packages smallmind needs to build, test and run, when they are missing.
# Idempotent: does nothing (and needs no network) when everything is present.
#   scripts/install_deps.sh          everything: build, serve, tests (and the tests' npm folder)
#   scripts/install_deps.sh --serve  only what building and running the serving programs needs
#                                    (`make run`): no test packages, no Node, no npm ci
set -euo pipefail

mode=all
case "${1:-}" in
  "") ;;
  --serve) mode=serve ;;
  *) echo "usage: $0 [--serve]" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake pkg-config ccache git
  libgrpc++-dev libgrpc-dev protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libssl-dev openssl
  libabsl-dev  # shared/grpc_process.cc sets Abseil's Mutex deadlock detection (gRPC pulls it in too)
  libboost-dev libspdlog-dev libfmt-dev libnuma-dev libpcre2-dev libicu-dev nlohmann-json3-dev libcli11-dev
  prometheus-cpp-dev
  # The test suite's build needs these too (CMake finds GTest when SMALLMIND_BUILD_TESTS is on).
  libgtest-dev libgmock-dev libbenchmark-dev
)
if [ "$mode" = all ]; then
  packages+=(
    clang-format
    python3 python3-grpcio python3-protobuf python3-jinja2
    python3-yaml  # scripts/check_k8s.py (ctest deploy.k8s) reads deploy/k8s
    docker-compose  # only `docker-compose config` in a test (compose.yaml and its monitoring profile)
    podman podman-compose runc debootstrap  # scripts/container_check.sh (ctest deploy.container)
    # podman 4.3's CNI networks resolve compose service names (the gateway's worker-0:50061) only
    # with this plugin; without it the gateway waits for its workers for ever
    golang-github-containernetworking-plugin-dnsname
    prometheus  # promtool: `promtool check metrics` on a live scrape (integration_test)
    chromium  # the web chat's browser test (tests/http/web_chat_check.mjs, puppeteer-core)
  )
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Node runs the HTTP door's tests with the official openai client; any node >= 18 will do.
if [ "$mode" = all ] && { ! command -v node >/dev/null || ! command -v npm >/dev/null; }; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install_deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$mode" = serve ] && exit 0
# The tests' own npm folders: tests/http (the official openai and Anthropic clients, puppeteer-core
# for the web chat) and tests/deploy (the Kubernetes schema check); each package-lock.json pins
# its packages.
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "$mode" = all ]; then
  for folder in tests/http tests/deploy; do
    if [ ! -f "$root/$folder/node_modules/.package-lock.json" ] ||
       [ "$root/$folder/package-lock.json" -nt "$root/$folder/node_modules/.package-lock.json" ]; then
      echo "install_deps: npm ci in $folder"
      (cd "$root/$folder" && npm ci --no-audit --no-fund --loglevel=error)
    fi
  done
fi
