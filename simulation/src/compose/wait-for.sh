#!/bin/sh
# Container entry point: waits (bounded) until the set-up step has finished writing this node's volume,
# then runs the node. Compose's depends_on conditions order the start too; this loop keeps the order
# under any Compose version and after a restart of a single service.
#   wait-for.sh <marker file> <command> [args...]
marker="$1"
shift
limit="${WAIT_FOR_SECONDS:-600}"
waited=0
while [ ! -f "$marker" ]; do
  if [ "$waited" -ge "$limit" ]; then
    echo "wait-for: $marker did not appear within ${limit}s; did the 'setup' service fail? (docker compose logs setup)" >&2
    exit 1
  fi
  sleep 1
  waited=$((waited + 1))
done
exec "$@"
