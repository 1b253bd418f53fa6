#!/bin/sh
# The `pg` profile's database: Debian's PostgreSQL 15 in the `pg-data` volume. On first start: a fresh
# random password for the superuser `driftline` in /secret/pg-password (the hubs' store.passwordFile;
# the `pg-secret` volume is mounted by the database and the hubs only), a cluster that takes it over TCP
# (scram-sha-256), and the database `driftline`. Then the server, in the foreground.
set -eu
BIN=/usr/lib/postgresql/15/bin
DATA=/var/lib/driftline-pg/data
mkdir -p /secret /var/lib/driftline-pg
if [ ! -s /secret/pg-password ]; then
  umask 077
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >/secret/pg-password
  echo >>/secret/pg-password
fi
# Readable by the hubs (uid 1000 in driftline:local), nobody else is in the volume.
chown 1000:postgres /secret/pg-password && chmod 0440 /secret/pg-password
chown postgres:postgres /var/lib/driftline-pg
if [ ! -s "$DATA/PG_VERSION" ]; then
  runuser -u postgres -- "$BIN/initdb" -D "$DATA" -U driftline --pwfile=/secret/pg-password \
    --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >/dev/null
  echo 'host all all all scram-sha-256' >>"$DATA/pg_hba.conf"
  echo 'CREATE DATABASE driftline' | runuser -u postgres -- "$BIN/postgres" --single -D "$DATA" postgres >/dev/null
  echo "postgres: created the cluster and the database driftline" >&2
fi
exec runuser -u postgres -- "$BIN/postgres" -D "$DATA" -c listen_addresses='*' -c unix_socket_directories=/tmp
