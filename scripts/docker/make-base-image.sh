#!/usr/bin/env bash
# Builds a local stand-in for the Dockerfile's base image (default `node:20-bookworm-slim`) on a machine
# that cannot pull it: a Debian bookworm minbase tree from Debian's own packages (debootstrap), plus this
# machine's Node 20 binary, npm, and C headers, laid out like the official image (/usr/local, user `node`
# uid 1000), imported with `docker import`. The machine's CA bundle goes in too, so that npm and apt
# inside the build trust the same TLS interception the host trusts.
#
#   scripts/docker/make-base-image.sh [tag]        # default tag: node:20-bookworm-slim
#   DEBIAN_MIRROR=http://deb.debian.org/debian     # where debootstrap fetches bookworm
#
# Needs root (debootstrap), `debootstrap` (apt-get install debootstrap), a running Docker engine, and
# Node 20 on this machine. Takes one to three minutes; the result is about 250 MB.
set -euo pipefail

TAG="${1:-node:20-bookworm-slim}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
say() { echo "make-base-image: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root for debootstrap (run with sudo)"
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install -y debootstrap"
docker info >/dev/null 2>&1 || die "no Docker engine answers (start one: dockerd --storage-driver=vfs &)"
NODE_BIN="$(readlink -f "$(command -v node)")" || die "node is not on PATH"
node_major="$("$NODE_BIN" -p 'process.versions.node.split(".")[0]')"
[ "$node_major" = "20" ] || die "this machine's Node is $("$NODE_BIN" -v); the stand-in must carry Node 20"
NODE_PREFIX="$(dirname "$(dirname "$NODE_BIN")")"          # /usr for Debian/NodeSource, /usr/local for tarballs
NPM_DIR="$NODE_PREFIX/lib/node_modules/npm"
[ -f "$NPM_DIR/bin/npm-cli.js" ] || die "npm not found under $NPM_DIR"
[ -f "$NODE_PREFIX/include/node/node.h" ] || die "Node's C headers are missing ($NODE_PREFIX/include/node); native modules need them"

work="$(mktemp -d /tmp/driftline-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

say "debootstrap bookworm (minbase) from $MIRROR"
debootstrap --variant=minbase --include=ca-certificates bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed (log above)"; }

say "adding Node $("$NODE_BIN" -v) and npm $("$NODE_BIN" "$NPM_DIR/bin/npm-cli.js" -v 2>/dev/null) from this machine"
install -D -m 0755 "$NODE_BIN" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules" "$root/usr/local/include" "$root/usr/local/etc"
cp -a "$NPM_DIR" "$root/usr/local/lib/node_modules/npm"
[ -d "$NODE_PREFIX/lib/node_modules/corepack" ] && cp -a "$NODE_PREFIX/lib/node_modules/corepack" "$root/usr/local/lib/node_modules/"
cp -a "$NODE_PREFIX/include/node" "$root/usr/local/include/node"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
# The host's trust store (it may hold a TLS-intercepting proxy's CA that the registries sit behind).
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nfund=false\naudit=false\nupdate-notifier=false\n' \
  >"$root/usr/local/etc/npmrc"
# Node's shared libraries must all resolve inside the tree (minbase carries libstdc++ for apt).
missing="$(chroot "$root" /usr/local/bin/node -e 'process.exit(0)' 2>&1)" ||
  die "Node does not start inside the tree: $missing"

# Like the official image: a `node` user with uid/gid 1000.
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb "$root"/usr/share/doc/* "$root"/usr/share/man/*

say "docker import as $TAG"
tar -C "$root" --numeric-owner -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_VERSION='"$("$NODE_BIN" -p 'process.versions.node')" \
  --change 'CMD ["node"]' \
  --message "Driftline stand-in for $TAG (debootstrap bookworm minbase + host Node)" \
  - "$TAG" >/dev/null
say "done: $(docker image inspect --format '{{.Id}} {{.Size}} bytes' "$TAG")"
