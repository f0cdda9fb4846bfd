#!/usr/bin/env bash
# Proves the README's test command on a fresh machine: a minbase Debian 12 chroot holding
# only python3, python3-venv, git and ca-certificates gets a clean clone of this checkout's
# HEAD and runs `bash scripts/bootstrap.sh test` inside, as a new user would.
# Needs root and debootstrap; takes 20-40 minutes (apt, PyPI, the whole suite).
#   sudo bash scripts/fresh_debian_check.sh            # report: exit code and summary
#   FRESH_DEBIAN_KEEP=1 ... keeps the chroot for a look afterwards
# The minbase image is built once into $FRESH_DEBIAN_CACHE and copied for every run, so a
# second run starts from the same untouched image.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

CACHE="${FRESH_DEBIAN_CACHE:-/var/tmp/onnxstudio-fresh-debian}"
SUITE=bookworm
# The machine's own Debian mirror (deb822 or one-line sources), else the default one.
MIRROR=$(grep -hoE 'https?://[^ ]+/debian/?' /etc/apt/sources.list.d/*.sources \
    /etc/apt/sources.list 2>/dev/null | grep -v security | head -n 1 || true)
MIRROR="${FRESH_DEBIAN_MIRROR:-${MIRROR:-http://deb.debian.org/debian}}"

say() { printf '\033[1m[fresh-debian]\033[0m %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || { say "needs root (debootstrap, chroot, mount)"; exit 2; }
command -v debootstrap >/dev/null \
    || { say "needs debootstrap (Debian/Ubuntu: apt-get install debootstrap)"; exit 2; }

BASE="$CACHE/base-$SUITE"
if [ ! -f "$BASE/.complete" ]; then
    say "building a minbase $SUITE image from $MIRROR into $BASE (once)"
    rm -rf "$BASE"; mkdir -p "$CACHE"
    debootstrap --variant=minbase --include=python3,python3-venv,git,ca-certificates \
        "$SUITE" "$BASE" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
        || { say "debootstrap failed: see $CACHE/debootstrap.log"; exit 2; }
    touch "$BASE/.complete"
fi

ROOT=$(mktemp -d "$CACHE/run-XXXXXX")
mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -R "${mounted[i]}" 2>/dev/null || umount -lR "${mounted[i]}" 2>/dev/null || true
    done
    # Never delete through a mount that is still there (it would reach the host's /dev).
    if [ "${FRESH_DEBIAN_KEEP:-0}" != 1 ] && ! grep -q " $ROOT/" /proc/mounts; then
        rm -rf "$ROOT"
    else
        say "chroot kept at $ROOT"
    fi
}
trap cleanup EXIT

say "copying the image to $ROOT"
cp -a "$BASE/." "$ROOT/"
rm -f "$ROOT/.complete"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# This machine's own certificate authorities (a site's TLS-inspecting proxy) belong to the
# network, not to the fresh machine: the chroot trusts them too, and pip (whose own bundle
# ignores the system's) is pointed at the system's store.
NETWORK_ENV=()
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
    chroot "$ROOT" update-ca-certificates >/dev/null 2>&1
    NETWORK_ENV=(PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
fi
# A clean clone of what is committed here, nothing of the working tree or its venvs.
git clone --quiet --no-hardlinks "$REPO" "$ROOT/src/onnxstudio"
git -C "$ROOT/src/onnxstudio" checkout --quiet "$(git rev-parse HEAD)"

for fs in proc sys dev; do
    mkdir -p "$ROOT/$fs"
done
mount -t proc proc "$ROOT/proc"; mounted+=("$ROOT/proc")
mount -t sysfs sysfs "$ROOT/sys"; mounted+=("$ROOT/sys")
mount --rbind /dev "$ROOT/dev"; mount --make-rslave "$ROOT/dev"; mounted+=("$ROOT/dev")

LOG="$CACHE/$(basename "$ROOT").log"
say "running 'bash scripts/bootstrap.sh test' in the chroot (log: $LOG)"
set +e
# A clean environment: nothing of this machine's pip configuration, caches or display.
env -i HOME=/root TERM=dumb LANG=C.UTF-8 "${NETWORK_ENV[@]}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin chroot "$ROOT" /bin/bash -c 'cd /src/onnxstudio && bash scripts/bootstrap.sh test' \
    >"$LOG" 2>&1
code=$?
set -e
say "exit code $code; the end of the log:"
grep -aE '(=+ .* in [0-9.]+s|\[onnxstudio\]|^FAILED|^ERROR)' "$LOG" | tail -n 40 >&2 || true
tail -n 5 "$LOG" >&2
exit "$code"
