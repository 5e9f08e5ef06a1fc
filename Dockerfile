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
# stage is Node 24 (LTS) and that file, nothing else: no shell, no package manager,
# no node_modules.

# Both bases are pinned by digest, so a rebuild uses the same bytes. Bump them
# on purpose (e.g. `crane digest <image>:<tag>`), never by a moving tag alone.
# Node 24 LTS on Debian 13 in both stages; docs/runtime.md says where each
# digest came from. (Distroless tags no Node patch version: the runtime's
# Node is the 24.x that digest holds; make test runs on tools/versions.env's.)
ARG BUILD_IMAGE=node:24.21.0-trixie-slim@sha256:8ec5d7557396cfe32d21c3f9c13072355ceab22b584578ca4bb28af31120cffe
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian13:nonroot@sha256:774b7d020b24214835769e24c3544835526cd0288f0b094eae48e8b2c2429a79

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
