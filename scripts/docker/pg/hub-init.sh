#!/bin/sh
# The `pg` profile's one-shot set-up of its hubs (run in driftline:local as root): one hub.yaml for both
# hubs (same database, same dataDir volume: the hub key that signs acks, the CSRF key, blobs), the
# schema migrated and the hub key made once, and an admin user whose token goes to admin.json.
set -eu
DIR=/data/hub-pg
mkdir -p "$DIR"
cat >"$DIR/hub.yaml" <<YAML
listen: { host: 0.0.0.0, port: 8080 }
dataDir: $DIR/data
store:
  kind: postgres
  url: postgres://driftline@postgres:5432/driftline
  passwordFile: /secret/pg-password
YAML
chown -R node:node "$DIR"
as_node() { runuser -u node -- "$@"; }
as_node node hub/bin/hub.js init --config "$DIR/hub.yaml" >/dev/null
if [ ! -s "$DIR/admin.json" ]; then
  as_node node hub/bin/hub.js user add pg-admin --role admin --config "$DIR/hub.yaml" --json >"$DIR/admin.json"
  chown node:node "$DIR/admin.json" && chmod 0600 "$DIR/admin.json"
fi
echo "hub-init: done; the admin token is in $DIR/admin.json (docker compose exec hub-pg-1 cat $DIR/admin.json)" >&2
