# Driftline: one image for every part of the Compose topology (hub, relay, edge-agent, link emulator,
# set-up step). The relay and the agents run the offline package that ships to outposts (`npm run
# package`, unpacked in /opt/driftline-edge: bundled code, its own Node, the launchers bin/relay and
# bin/edge-agent); the hub, the link emulator and the set-up step run compiled by `npm run build`
# (hub/dist, simulation/dist; docs/decisions/440-compiled-programs.md).
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
 && mkdir /manifests/scripts && cp scripts/build.mjs /manifests/scripts/ \
 && for w in protocol hop edge-agent relay hub ui simulation; do \
      mkdir -p "/manifests/$w" && cp "$w/package.json" "/manifests/$w/" \
      && if [ -d "$w/bin" ]; then cp -a "$w/bin" "/manifests/$w/"; fi; \
    done

# ---- build: every dependency (better-sqlite3 compiles from source), the dashboard, the offline package
# (unpacked from its tarball, as an operator would), then dev deps pruned. Everything the runtime takes is
# moved under /out, so that it is one COPY (one layer) there.
FROM ${BASE_IMAGE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY --from=manifests /manifests /app
# node-gyp reads Node's headers from the image (npm_config_nodedir) instead of downloading them.
RUN cd /app && npm_config_nodedir=/usr/local npm ci --no-audit --no-fund --no-update-notifier
COPY . /app
RUN cd /app && npm run build \
 && npm run package -- --out /tmp/package \
 && mkdir -p /out/opt/driftline-edge \
 && tar xzf /tmp/package/driftline-edge-*-linux-*.tar.gz -C /out/opt/driftline-edge \
 && cd /out/opt/driftline-edge && sha256sum -c --quiet --strict SHA256SUMS && cd /app \
 && rm -rf /tmp/package \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf /root/.npm \
 && mv /app /out/app && chmod 0755 /out /out/opt

# ---- runtime: Node and the pruned tree with every program compiled (hub/dist, simulation/dist), and the
# unpacked package in /opt/driftline-edge.
FROM ${BASE_IMAGE} AS runtime
# scripts/docker/up.sh removes the untagged images of earlier builds by this label, and nothing else.
LABEL org.driftline.image=driftline
# Volumes mounted under /data start out owned by `node` (uid 1000), who runs every service.
RUN mkdir -p /data && chown node:node /data
ENV NODE_ENV=production \
    LOG_LEVEL=info \
    PATH=/app/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /app
USER node
COPY --from=build /out /
