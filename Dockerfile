# Driftline: one image for every part of the Compose topology (hub, relay, edge-agent, link emulator,
# set-up step). TypeScript runs from source through tsx (docs/decisions/001); nothing is compiled.
#
#   docker build -t driftline:local .                                  # base: node:20-bookworm-slim
#   docker build --build-arg BASE_IMAGE=my-mirror/node:20-bookworm-slim -t driftline:local .
#
# No registry to pull the base from? scripts/docker/make-base-image.sh builds a local stand-in with the
# same tag; scripts/docker/up.sh does that automatically when the pull fails.
#
# Few steps on purpose: under the vfs storage driver (FIELD-NOTES) every step of the classic builder
# copies the whole image, so each instruction costs seconds to tens of seconds.
ARG BASE_IMAGE=node:20-bookworm-slim

# ---- manifests: only what `npm ci` reads. Its content, not the context's, keys the npm ci layer below,
# so editing source reuses the installed dependencies.
FROM ${BASE_IMAGE} AS manifests
COPY . /src
RUN cd /src && mkdir /manifests \
 && cp package.json package-lock.json .npmrc /manifests/ \
 && for w in protocol hop edge-agent relay hub ui simulation; do \
      mkdir -p "/manifests/$w" && cp "$w/package.json" "/manifests/$w/" \
      && if [ -d "$w/bin" ]; then cp -a "$w/bin" "/manifests/$w/"; fi; \
    done

# ---- build: every dependency (better-sqlite3 compiles from source), the dashboard, then dev deps pruned.
FROM ${BASE_IMAGE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY --from=manifests /manifests /app
# node-gyp reads Node's headers from the image (npm_config_nodedir) instead of downloading them.
RUN cd /app && npm_config_nodedir=/usr/local npm ci --no-audit --no-fund --no-update-notifier
COPY . /app
RUN cd /app && npm run build -w @driftline/ui \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf /root/.npm

# ---- runtime: Node and the pruned tree (tsx included: a runtime dependency of every program).
FROM ${BASE_IMAGE} AS runtime
# Volumes mounted under /data start out owned by `node` (uid 1000), who runs every service.
RUN mkdir -p /data && chown node:node /data
ENV NODE_ENV=production \
    LOG_LEVEL=info \
    PATH=/app/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /app
USER node
COPY --from=build /app /app
