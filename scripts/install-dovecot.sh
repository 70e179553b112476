#!/usr/bin/env bash
# Makes sure Dovecot's IMAP server is installed, for the IMAP tests (credential
# validation, IMAP trigger). Installs Debian's `dovecot-imapd` only when the
# `dovecot` or `doveadm` binaries are missing; never starts the system service:
# each test runs its own unprivileged Dovecot from a config file in a temp dir
# (test/helpers/dovecot.ts). Idempotent; needs root (or sudo) only to install.
set -euo pipefail

log() { printf '[install-dovecot] %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else log "need root to run: $*"; exit 1; fi
}

if command -v dovecot >/dev/null 2>&1 && command -v doveadm >/dev/null 2>&1; then
  exit 0
fi

log "installing dovecot-imapd"
as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dovecot-imapd >/dev/null
command -v dovecot >/dev/null 2>&1 || { log "dovecot is still missing after install"; exit 1; }
log "dovecot $(dovecot --version) installed"
