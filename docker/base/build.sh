#!/usr/bin/env bash
# Build the evaluation base image without any registry: debootstrap a minimal Debian
# bookworm with Python into a temp dir and `docker import` it.
# On a machine that can pull, `python:3.11-slim` (config evaluate.base_image) works instead.
#
# Usage: docker/base/build.sh [--force]
# Env:   DLBENCH_BASE_TAG       image tag            (default dlbench/base:bookworm)
#        DLBENCH_DEBIAN_MIRROR  Debian mirror URL    (default: the host's apt mirror)
#        DLBENCH_CA_BUNDLE      CA bundle to trust   (default /etc/ssl/certs/ca-certificates.crt)
set -euo pipefail

TAG="${DLBENCH_BASE_TAG:-dlbench/base:bookworm}"
CA_BUNDLE="${DLBENCH_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
SUITE=bookworm
PACKAGES=python3,python3-venv,python3-pip,ca-certificates
RUNNER_UID=10001
FORCE=0

case "${1:-}" in
  --force) FORCE=1 ;;
  "") ;;
  *) echo "usage: $0 [--force]" >&2; exit 2 ;;
esac

log() { echo "[base-image] $*" >&2; }

# The mirror apt already reaches (through any proxy), so debootstrap fetches the same way.
host_mirror() {
  local uri
  uri=$(grep -rhoE '^(URIs:|deb)[[:space:]]+[^[:space:]]*' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
        | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

ensure_debootstrap() {
  command -v debootstrap >/dev/null && return
  log "installing debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}

# Drop what a test runner never reads: apt lists and caches, docs, man pages, locales.
strip_rootfs() {
  local root=$1
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
         "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
         "$root"/usr/share/locale/* "$root"/var/log/*.log "$root"/tmp/* "$root"/dev/*
}

configure_rootfs() {
  local root=$1
  chroot "$root" groupadd --gid "$RUNNER_UID" runner
  chroot "$root" useradd --uid "$RUNNER_UID" --gid "$RUNNER_UID" --create-home --shell /bin/sh runner
  chroot "$root" python3 -m venv /opt/venv
  # Trust the host's CA bundle (it holds any proxy's CA) and point pip at the merged store.
  # Add only the certificates the image lacks, one per file, so that
  # update-ca-certificates puts them in the bundle and makes their hash links.
  if [ -s "$CA_BUNDLE" ]; then
    local dir="$root"/usr/local/share/ca-certificates/dlbench-host
    mkdir -p "$dir"
    awk -v dir="$dir" '
      FNR == 1 { file++ }
      /-----BEGIN CERTIFICATE-----/ { cert = "" }
      { cert = cert $0 "\n" }
      /-----END CERTIFICATE-----/ {
        if (file == 1) known[cert] = 1
        else if (!(cert in known)) { n++; out = sprintf("%s/%03d.crt", dir, n); printf "%s", cert > out; close(out) }
      }' "$root"/etc/ssl/certs/ca-certificates.crt "$CA_BUNDLE"
    chroot "$root" update-ca-certificates >/dev/null
  fi
  printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\nno-cache-dir = true\n' > "$root"/etc/pip.conf
}

main() {
  # Parallel callers (e.g. test workers) wait here, then find the tag and skip.
  exec 9>"${TMPDIR:-/tmp}/dlbench-base-image.lock"
  flock 9
  if [ "$FORCE" = 0 ] && docker image inspect "$TAG" >/dev/null 2>&1; then
    log "$TAG exists (use --force to rebuild)"
    return
  fi
  [ "$(id -u)" = 0 ] || { log "debootstrap needs root: run as root (sudo $0)"; exit 1; }
  ensure_debootstrap
  local mirror start
  mirror="${DLBENCH_DEBIAN_MIRROR:-$(host_mirror)}"
  WORK=$(mktemp -d /tmp/dlbench-base.XXXXXX)
  trap 'rm -rf "$WORK"' EXIT
  local root="$WORK/rootfs"
  start=$(date +%s)
  log "debootstrap $SUITE minbase from $mirror into $root"
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$root" "$mirror" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -n 30 "$WORK/debootstrap.log" >&2; exit 1; }
  configure_rootfs "$root"
  strip_rootfs "$root"
  log "importing as $TAG"
  tar --numeric-owner -C "$root" -c . | docker import \
    --change 'ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["python3"]' \
    --message "dlbench base: debootstrap $SUITE minbase + $PACKAGES" \
    - "$TAG" >/dev/null
  log "built $TAG in $(( $(date +%s) - start )) s ($(docker image inspect -f '{{.Size}}' "$TAG") bytes)"
}

main
