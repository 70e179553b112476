#!/usr/bin/env bash
# The deploy/ stack on this machine, without containers: two Gatehouse instances sharing one
# PostgreSQL database and one Redis, behind nginx configured with deploy/nginx/gatehouse.conf.
#
#   bash deploy/run-local.sh          # Ctrl-C stops everything it started
#
# Settings (environment):
#   DATABASE_URL   default postgres://postgres@127.0.0.1:5432/gatehouse_local (created when missing)
#   REDIS_URL      default redis://127.0.0.1:6379
#   NGINX_PORT     default 8000   public port (nginx)
#   GATEWAY_PORTS  default "8080 8082", MANAGEMENT_PORTS default "8081 8083"
#   NGINX_MANAGEMENT_PORT default 8090 (nginx's internal management server, 127.0.0.1)
#   RUN_DIR        default a new temporary directory (data, logs, nginx files)
# Prints one line `ready: …` with the addresses once nginx answers, and an admin token.
set -euo pipefail
cd "$(dirname "$0")/.."

DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/gatehouse_local}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
NGINX_PORT="${NGINX_PORT:-8000}"
NGINX_MANAGEMENT_PORT="${NGINX_MANAGEMENT_PORT:-8090}"
read -r -a GATEWAY_PORTS <<< "${GATEWAY_PORTS:-8080 8082}"
read -r -a MANAGEMENT_PORTS <<< "${MANAGEMENT_PORTS:-8081 8083}"
RUN_DIR="${RUN_DIR:-$(mktemp -d -t gatehouse-local-XXXXXX)}"
mkdir -p "$RUN_DIR"

log() { printf '[run-local] %s\n' "$*"; }
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { log "nginx is not installed (Debian: apt-get install nginx)"; exit 1; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

pids=()
cleanup() {
  trap - EXIT INT TERM
  [ -f "$RUN_DIR/nginx.pid" ] && kill "$(cat "$RUN_DIR/nginx.pid")" 2>/dev/null || true
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  log "stopped"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

[ -f dist/src/main/index.js ] || { log "building (npm run build)"; npm run build --silent; }

# The database: created when it does not exist (through the server's maintenance database).
node --input-type=module -e '
  import pg from "pg"
  const url = new URL(process.argv[1]); const name = url.pathname.slice(1)
  const admin = new URL(url); admin.pathname = "/postgres"
  const c = new pg.Client({ connectionString: admin.toString() }); await c.connect()
  const { rowCount } = await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])
  if (rowCount === 0) await c.query(`CREATE DATABASE "${name.replace(/"/g, "")}"`)
  await c.end()' "$DATABASE_URL"

wait_ready() {
  for _ in $(seq 1 150); do
    if node -e 'fetch(process.argv[1]).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$1"; then return 0; fi
    sleep 0.2
  done
  log "no answer from $1 (see $RUN_DIR/*.log)"; exit 1
}

# Two instances; the first writes the signing and secrets keys into the shared DATA_DIR.
for i in 0 1; do
  DATABASE_URL="$DATABASE_URL" CACHE_TYPE=redis REDIS_URL="$REDIS_URL" DATA_DIR="$RUN_DIR/data" \
    HOST=127.0.0.1 PORT="${GATEWAY_PORTS[$i]}" MANAGEMENT_HOST=127.0.0.1 MANAGEMENT_PORT="${MANAGEMENT_PORTS[$i]}" \
    TRUSTED_PROXIES=127.0.0.1 LOG_FORMAT=json \
    node dist/src/main/index.js > "$RUN_DIR/gatehouse-$i.log" 2>&1 &
  pids+=($!)
  wait_ready "http://127.0.0.1:${MANAGEMENT_PORTS[$i]}/readyz"
  log "instance $i: gateway http://127.0.0.1:${GATEWAY_PORTS[$i]}, management http://127.0.0.1:${MANAGEMENT_PORTS[$i]}"
done

# nginx with the shipped example, pointed at this machine's ports.
sed -e "s/server 127.0.0.1:8080 max_fails/server 127.0.0.1:${GATEWAY_PORTS[0]} max_fails/" \
    -e "s/server 127.0.0.1:8082 max_fails/server 127.0.0.1:${GATEWAY_PORTS[1]} max_fails/" \
    -e "s/listen 80;/listen 127.0.0.1:${NGINX_PORT};/" \
    -e "s/listen 127.0.0.1:8090;/listen 127.0.0.1:${NGINX_MANAGEMENT_PORT};/" \
    -e "s#proxy_pass http://127.0.0.1:8081;#proxy_pass http://127.0.0.1:${MANAGEMENT_PORTS[0]};#" \
    deploy/nginx/gatehouse.conf > "$RUN_DIR/gatehouse.conf"
mkdir -p "$RUN_DIR/nginx-temp"
cat > "$RUN_DIR/nginx.conf" <<EOF
worker_processes 1;
pid $RUN_DIR/nginx.pid;
error_log $RUN_DIR/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log $RUN_DIR/nginx-access.log;
  client_body_temp_path $RUN_DIR/nginx-temp/body;
  proxy_temp_path $RUN_DIR/nginx-temp/proxy;
  fastcgi_temp_path $RUN_DIR/nginx-temp/fastcgi;
  uwsgi_temp_path $RUN_DIR/nginx-temp/uwsgi;
  scgi_temp_path $RUN_DIR/nginx-temp/scgi;
  include $RUN_DIR/gatehouse.conf;
}
EOF
"$NGINX" -c "$RUN_DIR/nginx.conf" -p "$RUN_DIR"
wait_ready "http://127.0.0.1:${NGINX_MANAGEMENT_PORT}/readyz"

token=$(DATA_DIR="$RUN_DIR/data" node bin/gatehouse.mjs token --sub local-admin --role admin)
log "ready: gateway http://127.0.0.1:${NGINX_PORT} (nginx), management http://127.0.0.1:${NGINX_MANAGEMENT_PORT} (nginx, internal), run dir $RUN_DIR"
log "admin token: $token"
wait "${pids[@]}"
