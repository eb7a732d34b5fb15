#!/usr/bin/env bash
# Build an evaluation base image without any registry: debootstrap a minimal Debian or
# Ubuntu release with its Python into a temp dir and `docker import` it. Each release brings
# one Python (images.pythons in the config): bookworm 3.11 (the default), jammy 3.10,
# bullseye 3.9, focal 3.8, noble 3.12, trixie 3.13; code is resolved and tested on the
# Python of its day.
# On a machine that can pull, `python:3.X-slim` works instead.
#
# Usage: docker/base/build.sh [--force] [--suite SUITE]
# Env:   DLBENCH_BASE_TAG       image tag            (default dlbench/base:SUITE)
#        DLBENCH_DEBIAN_MIRROR  Debian mirror URL    (default: the host's apt mirror)
#        DLBENCH_UBUNTU_MIRROR  Ubuntu mirror URL    (default http://archive.ubuntu.com/ubuntu)
#        DLBENCH_CA_BUNDLE      CA bundle to trust   (default /etc/ssl/certs/ca-certificates.crt)
set -euo pipefail

CA_BUNDLE="${DLBENCH_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
SUITE=bookworm
PACKAGES=python3,python3-venv,python3-pip,ca-certificates
UBUNTU_SUITES=" focal jammy noble "
DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
RUNNER_UID=10001
FORCE=0

usage() { echo "usage: $0 [--force] [--suite SUITE]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --force) FORCE=1 ;;
    --suite) [ $# -ge 2 ] || usage; SUITE=$2; shift ;;
    *) usage ;;
  esac
  shift
done
TAG="${DLBENCH_BASE_TAG:-dlbench/base:$SUITE}"

log() { echo "[base-image] $*" >&2; }

# The mirror apt already reaches (through any proxy), so debootstrap fetches the same way.
host_mirror() {
  local uri
  uri=$(grep -rhoE '^(URIs:|deb)[[:space:]]+[^[:space:]]*' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
        | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

is_ubuntu() { [[ "$UBUNTU_SUITES" == *" $SUITE "* ]]; }

# Ubuntu's archive key, from Debian's own package of it, checked along Debian's signed
# chain (InRelease → Packages → .deb), so an Ubuntu release is verified as a Debian one is.
ubuntu_keyring() {
  local dest=$1 debian=$2 dists="$2/dists/trixie" entry file sum
  command -v gpgv >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gpgv >/dev/null; }
  curl -fsS "$dists/InRelease" -o "$WORK/InRelease"
  gpgv --keyring "$DEBIAN_KEYRING" --output "$WORK/Release" "$WORK/InRelease" 2>/dev/null \
    || { log "Debian's InRelease does not verify against $DEBIAN_KEYRING"; exit 1; }
  curl -fsS "$dists/main/binary-amd64/Packages.xz" -o "$WORK/Packages.xz"
  sum=$(awk '/^SHA256:/ {on=1; next} /^[A-Za-z]/ {on=0} on && $3 == "main/binary-amd64/Packages.xz" {print $1}' "$WORK/Release")
  echo "$sum  $WORK/Packages.xz" | sha256sum -c --quiet - || { log "Packages.xz does not match Release"; exit 1; }
  entry=$(xz -dc "$WORK/Packages.xz" | awk '/^Package: ubuntu-keyring$/ {on=1} /^$/ {on=0} on')
  file=$(echo "$entry" | awk '/^Filename:/ {print $2}')
  sum=$(echo "$entry" | awk '/^SHA256:/ {print $2}')
  [ -n "$file" ] || { log "no ubuntu-keyring in Debian trixie"; exit 1; }
  curl -fsS "$debian/$file" -o "$WORK/keyring.deb"
  echo "$sum  $WORK/keyring.deb" | sha256sum -c --quiet - || { log "$file does not match Packages"; exit 1; }
  dpkg-deb -x "$WORK/keyring.deb" "$WORK/keyring"
  cp "$WORK/keyring/usr/share/keyrings/ubuntu-archive-keyring.gpg" "$dest"
}

# debootstrap's script for the release: Ubuntu releases newer than the host's debootstrap
# knows are bootstrapped as every Ubuntu release since gutsy is.
suite_script() {
  local scripts=/usr/share/debootstrap/scripts
  if [ -e "$scripts/$SUITE" ]; then echo "$scripts/$SUITE"; else echo "$scripts/gutsy"; fi
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
  local mirror start keyring=() components=main
  mirror="${DLBENCH_DEBIAN_MIRROR:-$(host_mirror)}"
  WORK=$(mktemp -d /tmp/dlbench-base.XXXXXX)
  trap 'rm -rf "$WORK"' EXIT
  if is_ubuntu; then
    ubuntu_keyring "$WORK/ubuntu.gpg" "$mirror"
    mirror="${DLBENCH_UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}"
    keyring=(--keyring="$WORK/ubuntu.gpg")
    components=main,universe
  fi
  local root="$WORK/rootfs"
  start=$(date +%s)
  log "debootstrap $SUITE minbase from $mirror into $root"
  debootstrap --variant=minbase --components="$components" "${keyring[@]}" --include="$PACKAGES" \
    "$SUITE" "$root" "$mirror" "$(suite_script)" >"$WORK/debootstrap.log" 2>&1 \
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
