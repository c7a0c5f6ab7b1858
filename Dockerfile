# smallmind image: the gateway, the worker and the CLI built on Debian 12. The default model
# (builtin:stories260K, from models/) is embedded in the binaries, so the image needs no model file.
FROM debian:12 AS build
WORKDIR /src
COPY scripts/install_deps.sh scripts/install_deps.sh
RUN scripts/install_deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DSMALLMIND_BUILD_TESTS=OFF \
      -DSMALLMIND_BUILD_BENCH=OFF \
 && cmake --build /build -j"$(nproc)" --target smallmind-gateway smallmind-worker smallmind

FROM debian:12-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libgrpc++1.51 libprotobuf32 libspdlog1.10 libnuma1 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/bin/smallmind-gateway /build/bin/smallmind-worker /build/bin/smallmind \
     /usr/local/bin/
EXPOSE 50051
ENTRYPOINT ["/usr/local/bin/smallmind-gateway"]
