#!/usr/bin/env bash
# The container path, for real (ctest deploy.container; CI runs it, elsewhere it runs when
# SMALLMIND_CONTAINER_CHECK=1): builds the image with podman (the Dockerfile, unchanged), brings
# compose.yaml up with podman-compose, and checks from the host through both doors: a gRPC Generate
# and health, an OpenAI chat completion, /metrics, and a worker killed inside its container coming
# back. Prints the build time and the image size. Leaves the images (the next build reuses their
# layers) and nothing else: containers, network and temporary files are removed on exit.
#
#   scripts/container_check.sh CLI     CLI: the host's smallmind client (build/bin/smallmind)
#
# Needs podman, podman-compose, runc and debootstrap (scripts/install_deps.sh). No registry is
# reachable from these machines, so the debian:12 base image is made locally with debootstrap from
# the host's Debian mirror when podman does not have it yet.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cli="${1:?usage: $0 PATH/TO/smallmind}"
case "${CI:-}" in "" | 0 | false | FALSE | False) ci=false ;; *) ci=true ;; esac
if [ "$ci" = false ] && [ "${SMALLMIND_CONTAINER_CHECK:-0}" != 1 ]; then
  echo "container_check: skipped (runs under CI=true or SMALLMIND_CONTAINER_CHECK=1)"
  exit 77
fi
for tool in podman podman-compose runc debootstrap; do
  if ! command -v "$tool" >/dev/null; then
    echo "container_check: $tool is missing (scripts/install_deps.sh installs it)" >&2
    exit 1
  fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/smallmind-container.XXXXXX")"
project="smallmind-check-$$"
compose=(podman-compose -p "$project" -f "$root/compose.yaml")
cleanup() {
  (cd "$root" && "${compose[@]}" down -t 2 >/dev/null 2>&1) || true
  podman network rm -f "${project}_default" >/dev/null 2>&1 || true  # podman-compose 1.0 keeps it
  rm -rf "$work"
}
trap cleanup EXIT

# This VM: crun cannot set rlimits and cgroups are hybrid, so runc with cgroupfs, and limits no
# higher than the ones it runs under (scripts/../../shared/TOOLING.md 1b). CONTAINERS_CONF reaches
# the podman that podman-compose runs too.
nofile="$(ulimit -Hn)"
[ "$nofile" = unlimited ] && nofile=1048576
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=1024:$nofile", "nproc=1024:1024"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
export CONTAINERS_CONF="$work/containers.conf"

if ! podman image exists docker.io/library/debian:12; then
  echo "container_check: making the debian:12 base image with debootstrap"
  # Only the apt source files that exist: sed exits 2 on a missing one, and under pipefail that
  # ended the script here on a machine with debian.sources but no sources.list.
  sources=()
  for file in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
    [ -f "$file" ] && sources+=("$file")
  done
  mirror=""
  if [ "${#sources[@]}" -gt 0 ]; then
    mirror="$(sed -n 's/^URIs: *//p; s/^deb \(http[^ ]*\) bookworm .*/\1/p' "${sources[@]}" |
      grep -v security | head -1 || true)"
  fi
  debootstrap --variant=minbase bookworm "$work/rootfs" "${mirror:-http://deb.debian.org/debian}" \
    >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; exit 1; }
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$work/rootfs/etc/apt/sources.list.d/"
    rm -f "$work/rootfs/etc/apt/sources.list"
  fi
  tar -C "$work/rootfs" -c . | podman import - docker.io/library/debian:12 >/dev/null
  rm -rf "$work/rootfs"
fi
podman image exists docker.io/library/debian:12-slim ||
  podman tag docker.io/library/debian:12 docker.io/library/debian:12-slim

# The host's ccache, mounted for the build stage (the Dockerfile uses /ccache when it is there).
ccache_dir="$(ccache -k cache_dir 2>/dev/null || true)"
ccache_mount=()
if [ -n "$ccache_dir" ]; then
  mkdir -p "$ccache_dir"
  ccache_mount=(-v "$ccache_dir:/ccache")
fi
start=$(date +%s)
podman build --network host "${ccache_mount[@]}" -t smallmind:latest "$root" >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; echo "container_check: podman build failed" >&2; exit 1; }
size=$(podman image inspect smallmind:latest --format '{{.Size}}')
echo "container_check: image built in $(($(date +%s) - start)) s, $((size / 1000000)) MB"
podman run --rm smallmind:latest --version >/dev/null 2>&1 ||
  podman run --rm smallmind:latest --help >/dev/null ||
  { echo "container_check: the image's gateway does not start" >&2; exit 1; }
for program in smallmind-worker smallmind smallmind-modelgen; do
  podman run --rm --entrypoint "/usr/local/bin/$program" smallmind:latest --help >/dev/null ||
    { echo "container_check: the image's $program does not start" >&2; exit 1; }
done

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
export SMALLMIND_PORT="$(free_port)" SMALLMIND_HTTP_PORT="$(free_port)" \
  SMALLMIND_METRICS_PORT="$(free_port)"
# The services by name: podman-compose 1.0 does not skip the monitoring profile's services.
(cd "$root" && "${compose[@]}" up -d --no-build worker-0 worker-1 gateway >"$work/up.log" 2>&1) ||
  { cat "$work/up.log"; echo "container_check: podman-compose up failed" >&2; exit 1; }

python3 "$root/scripts/container_probe.py" --cli "$cli" --project "$project" \
  --grpc "127.0.0.1:$SMALLMIND_PORT" --http "127.0.0.1:$SMALLMIND_HTTP_PORT" \
  --metrics "127.0.0.1:$SMALLMIND_METRICS_PORT" || {
  # What each container said, so a failed probe can be read in CI's log.
  for name in $(podman ps -a --filter "label=io.podman.compose.project=$project" \
                  --format '{{.Names}}'); do
    echo "== podman logs --tail 30 $name" >&2
    podman logs --tail 30 "$name" >&2 || true
  done
  exit 1
}
