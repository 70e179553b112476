#!/usr/bin/env bash
# Makes sure the servers the test suite talks to are installed and running on
# loopback: PostgreSQL (127.0.0.1:5432, trust auth, database `test`) and Redis
# (127.0.0.1:6379). Idempotent: installs when missing, starts when stopped,
# waits until ready. Needs root (or sudo) only when something must be installed
# or started.
set -euo pipefail

PGHOST_ADDR=127.0.0.1
PGPORT=5432
REDIS_PORT=6379

log() { printf '[test-services] %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else log "need root to run: $*"; exit 1; fi
}

apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

pg_ready() { pg_isready -q -h "$PGHOST_ADDR" -p "$PGPORT" 2>/dev/null; }
redis_ready() { [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = "PONG" ]; }

wait_for() {
  local what=$1 check=$2 i
  for i in $(seq 1 60); do
    if $check; then return 0; fi
    sleep 0.5
  done
  log "$what did not become ready"; exit 1
}

# --- PostgreSQL ---------------------------------------------------------------
if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! command -v pg_isready >/dev/null 2>&1; then
  log "installing PostgreSQL"
  apt_install postgresql postgresql-client
fi
ensure_trust() {
  # Debian's packaged pg_hba.conf asks for scram on loopback; the suite uses
  # trust on loopback only (the server listens on localhost alone).
  local hba=$1
  if ! grep -Eq '^host\s+all\s+all\s+127\.0\.0\.1/32\s+trust' "$hba"; then
    log "setting loopback trust authentication in $hba"
    as_root sed -i -E 's/^(local|host)(\s+all\s+all\s+.*)(peer|scram-sha-256|md5)\s*$/\1\2trust/' "$hba"
    return 1
  fi
}
ver=$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)
if [ -z "$ver" ]; then log "no PostgreSQL cluster found in /etc/postgresql"; exit 1; fi
hba=/etc/postgresql/$ver/main/pg_hba.conf
if ! pg_ready; then
  ensure_trust "$hba" || true
  log "starting PostgreSQL $ver"
  as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
  wait_for PostgreSQL pg_ready
fi
psql_admin() { psql -h "$PGHOST_ADDR" -p "$PGPORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -w "$@"; }
if ! psql_admin -tAc 'SELECT 1' >/dev/null 2>&1; then
  if ! ensure_trust "$hba"; then
    as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main reload
    sleep 1
  fi
  psql_admin -tAc 'SELECT 1' >/dev/null || { log "cannot connect to PostgreSQL as postgres on $PGHOST_ADDR:$PGPORT"; exit 1; }
fi
if ! psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname='test'" | grep -q 1; then
  log "creating database test"
  psql_admin -qc 'CREATE DATABASE test'
fi

# --- Redis --------------------------------------------------------------------
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  log "installing Redis"
  apt_install redis-server
fi
if ! redis_ready; then
  log "starting Redis"
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/test.log
  wait_for Redis redis_ready
fi

# --- Dovecot (IMAP tests run their own unprivileged instance) -------------------
bash "$(dirname "$0")/install-dovecot.sh"

# --- Chromium (the console's browser tests drive it with playwright-core) --------
if ! command -v chromium >/dev/null 2>&1; then
  log "installing Chromium"
  apt_install chromium
fi

log "PostgreSQL, Redis, Dovecot and Chromium are ready"
