# One runtime image per function; the FUNCTION build argument picks which:
#
#   docker build --build-arg FUNCTION=compose-model-cache -t <image> .
#
# (`make images` builds all three, each with its Node flags from
# functions/<name>/node-options as --build-arg NODE_OPTIONS=... and its
# allocator settings from functions/<name>/glibc-tunables as --build-arg
# GLIBC_TUNABLES=...; built by hand without them, a function runs with Node's
# and glibc's defaults and more memory.) The
# build stage bundles the function into one self-contained file; the runtime
# stage is Node 20 and that file, nothing else: no shell, no package manager,
# no node_modules.

# Both bases are pinned by digest, so a rebuild uses the same bytes. Bump them
# on purpose (e.g. `crane digest <image>:<tag>`), never by a moving tag alone.
ARG BUILD_IMAGE=node:20.19.5-bookworm-slim@sha256:9e70124bd00f47dd023e349cd587132ae61892acc0e47ed641416c3e18f401c3
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs20-debian12:nonroot@sha256:2cd820156cf039c8b54ae2d2a97e424b6729070714de8707a6b79f20d56f6a9a

# The bundle is plain JavaScript, the same for every platform: build it once,
# natively, whatever platform the image is for ($BUILDPLATFORM is set by
# BuildKit, Docker's default builder since 23.0, and by buildah).
FROM --platform=$BUILDPLATFORM ${BUILD_IMAGE} AS build
ARG FUNCTION
RUN test -n "$FUNCTION" || { echo 'set --build-arg FUNCTION=<compose-model-cache|compose-model-cache-hydration|compose-model-replica>' >&2; exit 1; }
WORKDIR /src
COPY package.json package-lock.json ./
# Exactly the locked dependencies; no install scripts (esbuild's binary comes
# as an optional dependency and needs none).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/bundle.mjs scripts/
COPY functions/ functions/
RUN node scripts/build.mjs "$FUNCTION"

FROM ${RUNTIME_IMAGE}
ARG FUNCTION
LABEL org.opencontainers.image.title="${FUNCTION}" \
      org.opencontainers.image.description="Modelplane ${FUNCTION} composition function" \
      org.opencontainers.image.source="https://github.com/modelplaneai/model-cache-functions" \
      org.opencontainers.image.licenses="Apache-2.0"
# The bundle and the licence notices of what it bundles; root-owned and
# read-only to the function, which writes nothing to disk (logs go to stdout),
# so the container runs with a read-only root filesystem.
COPY --from=build /src/functions/${FUNCTION}/dist/main.js /function/main.js
COPY --from=build /src/functions/${FUNCTION}/dist/main.js.LEGAL.txt /function/THIRD_PARTY_NOTICES.txt
# The UID/GID Crossplane runs function pods as (runAsNonRoot).
USER 2000:2000
# Where Crossplane mounts the server certificates; the server reads tls.crt,
# tls.key and ca.crt there and requires client certificates. No flags needed.
ENV TLS_SERVER_CERTS_DIR=/tls/server
# The function's Node flags (functions/<name>/node-options; see there for why).
ARG NODE_OPTIONS=""
ENV NODE_OPTIONS=${NODE_OPTIONS}
# Its C allocator's settings (functions/<name>/glibc-tunables; see there for
# why). Empty, glibc sets nothing.
ARG GLIBC_TUNABLES=""
ENV GLIBC_TUNABLES=${GLIBC_TUNABLES}
# gRPC, the port Crossplane's function runtime dials.
EXPOSE 9443
ENTRYPOINT ["/nodejs/bin/node", "/function/main.js"]
