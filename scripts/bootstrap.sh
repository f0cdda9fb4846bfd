#!/usr/bin/env bash
# One entry point for the README's two commands: `run` installs and starts the app,
# `test` installs what a fresh Debian machine lacks and runs the whole suite headless.
# Idempotent: re-running skips what is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${ONNXSTUDIO_VENV:-.venv}"
# Qt's xcb/offscreen plugins need these; a minimal Debian image lacks several.
QT_SYSTEM_PACKAGES=(libgl1 libegl1 libglib2.0-0 libfontconfig1 libdbus-1-3 libxkbcommon0
    libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
    libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 fonts-dejavu-core)
# The packaging tests validate the desktop entry and MIME registration and build with PyInstaller.
# libfile-mimeinfo-perl: xdg-mime's MIME-database lookup; appstream: metainfo validation.
TEST_SYSTEM_PACKAGES=(desktop-file-utils xdg-utils shared-mime-info binutils
    libfile-mimeinfo-perl appstream libglib2.0-bin)

log() { printf '\033[1m[onnxstudio]\033[0m %s\n' "$*" >&2; }

apt_install_missing() {
    local missing=() pkg
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! command -v apt-get >/dev/null || [ "$(id -u)" -ne 0 ]; then
        log "missing system packages (install them as root): ${missing[*]}"
        return 0
    fi
    log "installing system packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

pick_python() {
    local candidate
    for candidate in "${PYTHON:-}" python3 python; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null \
            && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$candidate"; return 0
        fi
    done
    log "Python 3.11 or newer is required"; exit 1
}

ensure_venv() {
    local extras="$1" py stamp
    if [ ! -x "$VENV/bin/python" ]; then
        py=$(pick_python)
        log "creating virtual environment $VENV with $($py --version)"
        if ! "$py" -m venv "$VENV" 2>/dev/null; then
            # Debian splits ensurepip into python3-venv.
            apt_install_missing python3-venv
            rm -rf "$VENV"; "$py" -m venv "$VENV"
        fi
        "$VENV/bin/python" -m pip install -q --upgrade pip
    fi
    stamp="$VENV/.installed-$extras"
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        log "installing onnxstudio${extras:+[$extras]} into $VENV"
        "$VENV/bin/python" -m pip install -q -e ".${extras:+[$extras]}"
        touch "$stamp"
    fi
}

cmd="${1:-run}"; shift || true
case "$cmd" in
    run)
        apt_install_missing "${QT_SYSTEM_PACKAGES[@]}"
        ensure_venv ""
        exec "$VENV/bin/onnxstudio" "$@"
        ;;
    test)
        apt_install_missing "${QT_SYSTEM_PACKAGES[@]}" "${TEST_SYSTEM_PACKAGES[@]}"
        ensure_venv dev
        export QT_QPA_PLATFORM=offscreen
        log "ruff";  "$VENV/bin/ruff" check onnxstudio tests resources scripts
        log "import-linter"; "$VENV/bin/lint-imports"
        log "mypy"; "$VENV/bin/mypy"
        log "pytest"; exec "$VENV/bin/python" -m pytest "$@"
        ;;
    bench)
        ensure_venv dev
        export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
        exec "$VENV/bin/python" -m tests.benchmarks.run "$@"
        ;;
    *)
        echo "usage: $0 run [MODEL...] | test [PYTEST ARGS] | bench [ARGS]" >&2; exit 2 ;;
esac
