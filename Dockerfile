# smallmind image: the gateway, the worker, the CLI and modelgen built on Debian 12. The default
# model (builtin:stories260K, from models/) is embedded in the binaries, so the image needs no
# model file. `docker build -t smallmind .` (or `podman build`); scripts/container_check.sh builds
# it, serves it with compose and checks both doors.

FROM debian:12 AS build
WORKDIR /src
# The packages first, in their own layer: a source change rebuilds from here down only.
COPY scripts/install_deps.sh scripts/install_deps.sh
RUN scripts/install_deps.sh --serve && rm -rf /var/lib/apt/lists/*
COPY . .
# A ccache folder mounted at /ccache (podman build -v DIR:/ccache, as scripts/container_check.sh
# does) is used when present; paths are relative to /src (CMakeLists.txt), so a host build of the
# same sources fills it. Without one, a plain build.
RUN if [ -w /ccache ]; then export CCACHE_DIR=/ccache; else export CCACHE_DISABLE=1; fi \
 && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSMALLMIND_BUILD_TESTS=OFF \
      -DSMALLMIND_BUILD_BENCH=OFF > /dev/null \
 && cmake --build build -j"$(nproc)" \
      --target smallmind-gateway smallmind-worker smallmind smallmind-modelgen \
 && mkdir -p /out/bin \
 && cp build/bin/smallmind-gateway build/bin/smallmind-worker build/bin/smallmind \
      build/bin/smallmind-modelgen /out/bin/ \
 && scripts/runtime_packages.sh /out/bin/* > /out/runtime-packages.txt \
 && rm -rf build

FROM debian:12-slim
# Exactly the packages whose libraries the programs load (derived from ldd in the build stage).
COPY --from=build /out/runtime-packages.txt /usr/share/smallmind/runtime-packages.txt
RUN apt-get update \
 && xargs -a /usr/share/smallmind/runtime-packages.txt \
      apt-get install -y --no-install-recommends \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin smallmind
COPY --from=build /out/bin/ /usr/local/bin/
USER smallmind
# gRPC, the OpenAI-compatible HTTP door, Prometheus metrics; workers listen on 50061.
EXPOSE 50051 8000 9464 50061
ENTRYPOINT ["/usr/local/bin/smallmind-gateway"]
CMD ["--help"]
