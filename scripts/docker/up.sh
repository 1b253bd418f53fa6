#!/usr/bin/env bash
# Brings Driftline's Compose topology up (docker-compose.yml): makes sure the base image exists (pull,
# or build the local stand-in when no registry answers), builds driftline:local once, starts everything
# detached, and waits until the dashboard answers on http://127.0.0.1:8080.
#
#   scripts/docker/up.sh            # up; `scripts/docker/up.sh down` stops and removes volumes
#   scripts/docker/up.sh build      # only the images (base and driftline:local), nothing started
#   DRIFTLINE_BASE_IMAGE=...        # another base (default node:20-bookworm-slim)
#   COMPOSE_PROJECT_NAME=...        # default driftline
#   DRIFTLINE_UP_TIMEOUT_S=...      # how long `up -d` may take (default 1200; then the set-up log is printed)
#
# Uses `docker compose` (v2) when present, else `docker-compose` (1.29).
set -euo pipefail
cd "$(dirname "$0")/../.."

case "${1:-}" in
  "" | down | build) ;;
  -h | --help)
    # the comment block at the top of this file
    sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
    ;;
  *)
    echo "up: unknown argument '$1' (scripts/docker/up.sh [build|down]; --help)" >&2
    exit 2
    ;;
esac

BASE="${DRIFTLINE_BASE_IMAGE:-node:20-bookworm-slim}"
export DRIFTLINE_BASE_IMAGE="$BASE"
export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-driftline}"
# Creating containers under the vfs storage driver copies whole images; compose v1's default 60 s
# HTTP timeout is too short for that on a loaded machine.
export COMPOSE_HTTP_TIMEOUT="${COMPOSE_HTTP_TIMEOUT:-600}"
say() { echo "up: $*" >&2; }

# Debian's docker.io client builds with BuildKit by itself (DOCKER_BUILDKIT=1); a newer client elsewhere
# on PATH (e.g. /usr/local/bin) may need the buildx plugin and fall back to the slow classic builder.
DOCKER=docker
if [ -x /usr/bin/docker ] && [ "$(command -v docker)" != /usr/bin/docker ]; then
  DOCKER=/usr/bin/docker
fi
docker() { command "$DOCKER" "$@"; }

# The compose command as a list, so that `timeout` can bound a call of it (a function it cannot run).
if docker compose version >/dev/null 2>&1; then
  COMPOSE=("$DOCKER" compose)
elif command -v docker-compose >/dev/null; then
  COMPOSE=(docker-compose)
else
  say "neither 'docker compose' nor 'docker-compose' found (apt-get install docker-compose)"
  exit 2
fi
compose() { "${COMPOSE[@]}" "$@"; }
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
# Each rebuild leaves the previous driftline:local untagged, and BuildKit keeps every step's cache; under
# vfs each is a whole copy of its tree (the disk filled after a day of rebuilds on one machine). Keep
# this build, its newest cache, and nothing of ours older.
docker image prune -f --filter label=org.driftline.image=driftline >/dev/null 2>&1 || true
docker builder prune -f --keep-storage "${DRIFTLINE_BUILD_CACHE:-3gb}" >/dev/null 2>&1 || true
if [ "${1:-}" = "build" ]; then
  say "images ready; 'scripts/docker/up.sh' starts the topology"
  exit 0
fi

# Under vfs every container starts as a full copy of its image: say so before `up` runs out of disk
# halfway and leaves a topology with half its containers.
root="$(docker info --format '{{.DockerRootDir}}' 2>/dev/null || echo /var/lib/docker)"
image_mb=$(($(docker image inspect driftline:local --format '{{.Size}}') / 1048576))
# Services outside any profile (the `pg` profile's only start when asked for).
containers=$(compose config 2>/dev/null | awk '/^services:/ {s = 1; next} /^[a-z]/ {s = 0}
  s && /^  [a-z0-9-]+:$/ {n++} s && /^    profiles:/ {p++} END {print n - p}')
if [ "$(docker info --format '{{.Driver}}' 2>/dev/null)" = vfs ] && [ -d "$root" ]; then
  free_mb=$(df -Pm "$root" | awk 'NR==2 {print $4}')
  need_mb=$((image_mb * containers))
  if [ "$free_mb" -lt "$need_mb" ]; then
    say "not enough disk for the topology: $containers containers × ${image_mb} MB (vfs copies the image per container) = ${need_mb} MB, ${free_mb} MB free under $root"
    say "free some (docker system prune; old data in /tmp) or use a storage driver that shares layers (overlay2)"
    exit 1
  fi
fi

# What the set-up step printed (each CLI run as it starts and ends), from its container; bounded.
setup_logs() {
  local id
  id="$(timeout 60 "${COMPOSE[@]}" ps -q setup 2>/dev/null | head -1 || true)"
  if [ -n "$id" ]; then timeout 60 "$DOCKER" logs "$id" 2>&1 || true; fi
}

start=$(date +%s)
# Bounded: services wait for the set-up step to finish, and a step that never did once held CI's whole
# Compose case in silence (DRIFTLINE_UP_TIMEOUT_S, default 20 min: creating containers under vfs on a
# loaded machine has taken 7).
if ! timeout "${DRIFTLINE_UP_TIMEOUT_S:-1200}" "${COMPOSE[@]}" up -d; then
  say "'up -d' failed or did not finish within ${DRIFTLINE_UP_TIMEOUT_S:-1200} s; the set-up step printed:"
  setup_logs | tail -40 >&2
  timeout 60 "${COMPOSE[@]}" ps >&2 || true
  exit 1
fi
for _ in $(seq 1 300); do
  if node -e "fetch('http://127.0.0.1:8080/v1/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; then
    say "up in $(($(date +%s) - start)) s. Dashboard: http://127.0.0.1:8080"
    # The set-up step created the admin user and printed the link that signs a browser in as it.
    # `docker logs` of the set-up container, bounded: compose v1's `logs` (which also watches the project's
    # events) once never returned here and held a whole CI run's Compose case.
    setup_logs | grep -o 'Sign in: .*' | tail -1 >&2 || true
    say "results arrive as the links allow (polar and mars have outages); 'scripts/docker/up.sh down' stops it"
    exit 0
  fi
  sleep 1
done
say "the hub did not answer on 127.0.0.1:8080 within 300 s; see: $(
  if docker compose version >/dev/null 2>&1; then echo docker compose; else echo docker-compose; fi
) -p $COMPOSE_PROJECT_NAME logs hub setup"
exit 1
