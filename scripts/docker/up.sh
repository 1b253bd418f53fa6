#!/usr/bin/env bash
# Brings Driftline's Compose topology up (docker-compose.yml): makes sure the base image exists (pull,
# or build the local stand-in when no registry answers), builds driftline:local once, starts everything
# detached, and waits until the dashboard answers on http://127.0.0.1:8080.
#
#   scripts/docker/up.sh            # up; `scripts/docker/up.sh down` stops and removes volumes
#   DRIFTLINE_BASE_IMAGE=...        # another base (default node:20-bookworm-slim)
#   COMPOSE_PROJECT_NAME=...        # default driftline
#
# Uses `docker compose` (v2) when present, else `docker-compose` (1.29).
set -euo pipefail
cd "$(dirname "$0")/../.."

BASE="${DRIFTLINE_BASE_IMAGE:-node:20-bookworm-slim}"
export DRIFTLINE_BASE_IMAGE="$BASE"
export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-driftline}"
# Creating containers under the vfs storage driver copies whole images; compose v1's default 60 s
# HTTP timeout is too short for that on a loaded machine.
export COMPOSE_HTTP_TIMEOUT="${COMPOSE_HTTP_TIMEOUT:-600}"
say() { echo "up: $*" >&2; }

# Debian's docker.io client builds with BuildKit by itself (DOCKER_BUILDKIT=1); a newer client elsewhere
# on PATH (e.g. /usr/local/bin) may need the buildx plugin and fall back to the slow classic builder.
if [ -x /usr/bin/docker ] && [ "$(command -v docker)" != /usr/bin/docker ]; then
  docker() { /usr/bin/docker "$@"; }
fi

if docker compose version >/dev/null 2>&1; then
  compose() { docker compose "$@"; }
elif command -v docker-compose >/dev/null; then
  compose() { docker-compose "$@"; }
else
  say "neither 'docker compose' nor 'docker-compose' found (apt-get install docker-compose)"
  exit 2
fi
docker info >/dev/null 2>&1 || { say "no Docker engine answers (start one: dockerd --storage-driver=vfs &)"; exit 1; }

if [ "${1:-}" = "down" ]; then
  compose down -v --remove-orphans
  exit 0
fi

if docker image inspect "$BASE" >/dev/null 2>&1; then
  say "base image $BASE is present"
elif docker pull "$BASE" >/dev/null 2>&1; then
  say "pulled $BASE"
else
  say "cannot pull $BASE (no registry?); building a local stand-in from this machine's Node and Debian packages"
  scripts/docker/make-base-image.sh "$BASE"
fi

# BuildKit skips the classic builder's container per step, which under vfs copies the whole image each
# time (about 5 min instead of 11 from scratch here). Docker 20.10's CLI has it built in; newer CLIs need
# the buildx plugin. Without either, Compose's own (classic) build does the same job, slower.
start=$(date +%s)
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if DOCKER_BUILDKIT=1 docker build --build-arg "BASE_IMAGE=$BASE" -t driftline:local . >"$log" 2>&1; then
  say "built driftline:local with BuildKit in $(($(date +%s) - start)) s"
elif grep -qi 'buildx' "$log"; then
  say "BuildKit unavailable ($(grep -i -m1 buildx "$log")); building with Compose's classic builder"
  compose build
  say "built driftline:local in $(($(date +%s) - start)) s"
else
  tail -40 "$log" >&2
  say "docker build failed (output above)"
  exit 1
fi
start=$(date +%s)
compose up -d
for _ in $(seq 1 300); do
  if node -e "fetch('http://127.0.0.1:8080/v1/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; then
    say "up in $(($(date +%s) - start)) s. Dashboard: http://127.0.0.1:8080"
    # The set-up step created the admin user and printed the link that signs a browser in as it.
    compose logs --no-color setup 2>/dev/null | grep -o 'Sign in: .*' | tail -1 >&2 || true
    say "results arrive as the links allow (polar and mars have outages); 'scripts/docker/up.sh down' stops it"
    exit 0
  fi
  sleep 1
done
say "the hub did not answer on 127.0.0.1:8080 within 300 s; see: $(
  if docker compose version >/dev/null 2>&1; then echo docker compose; else echo docker-compose; fi
) -p $COMPOSE_PROJECT_NAME logs hub setup"
exit 1
