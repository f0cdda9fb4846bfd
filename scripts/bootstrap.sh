#!/usr/bin/env bash
# One entry point for the README's two commands: `run` installs and starts the app,
# `test` installs what a fresh Debian machine lacks and runs the whole suite headless, then
# the core tests with every dependency at pyproject.toml's floor ($VENV-oldest) and the
# suite on the newest Python here ($VENV-py3.N), and prints which versions ran (CI's check).
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

# ensure_venv DIR EXTRAS [PYTHON] [CONSTRAINTS]: DIR holds onnxstudio[EXTRAS] for PYTHON
# (default: pick_python), pinned by the pip CONSTRAINTS file if given.
ensure_venv() {
    local venv="$1" extras="$2" py="${3:-}" constraints="${4:-}" stamp
    # Each step checks its own status: callers test this function in an `if`, where
    # `set -e` does not apply.
    if [ ! -x "$venv/bin/python" ]; then
        [ -n "$py" ] || py=$(pick_python)
        log "creating virtual environment $venv with $($py --version)"
        if ! "$py" -m venv "$venv" 2>/dev/null; then
            # Debian splits ensurepip into python3-venv.
            apt_install_missing python3-venv
            rm -rf "$venv"; "$py" -m venv "$venv" || return 1
        fi
        "$venv/bin/python" -m pip install -q --upgrade pip || return 1
    fi
    stamp="$venv/.installed-$extras"
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        log "installing onnxstudio${extras:+[$extras]} into $venv${constraints:+ (pinned by $constraints)}"
        "$venv/bin/python" -m pip install -q ${constraints:+-c "$constraints"} \
            -e ".${extras:+[$extras]}" || return 1
        touch "$stamp"
    fi
}

# Debian ships the shared libpython that PyInstaller bundles (libpython3.11.so.1.0) apart
# from python3, in libpython3.X: the package for a venv's interpreter, if it is Debian's.
libpython_package() {
    "$1" -c 'import sys
if sys.base_prefix == "/usr": print("libpython%d.%d" % sys.version_info[:2])'
}

# ------------------------------------------------------------ the versions CI tests
# The Qt-free core (model, layout, runner, every CLI command, the edit/diff/extract/inspect
# cores), and the main window's tests for the oldest PySide6: what the oldest versions
# must pass (~1.5 min alone here).
CORE_TESTS=(tests/test_model_*.py tests/test_layout_*.py tests/test_runner_*.py
    tests/test_*_cli.py tests/test_*_core.py tests/test_hostile_external_data.py
    tests/test_core_without_qt.py tests/test_split.py tests/test_optimised_graph.py
    tests/test_inspect_run_*.py tests/test_profile_child.py tests/test_sample_model.py
    tests/test_main_window.py)
SUMMARY=()
WORST=0
PASSED=0
FAILED=0

versions_of() {
    "$1" -c 'import sys
from importlib.metadata import version
names = ("onnx", "onnxruntime", "numpy", "PySide6-Essentials", "pillow")
print("Python %d.%d.%d, " % sys.version_info[:3]
      + ", ".join(f"{n.split(chr(45))[0]} {version(n)}" for n in names))'
}

# run_suite LABEL VENV WHAT PYTEST-ARGS...: pytest in VENV, its last line kept for the summary.
# N of "N passed" (or failed, error) in a pytest summary line; 0 when absent.
count_of() {
    local n
    n=$(printf '%s' "$2" | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' | head -n 1) || true
    echo "${n:-0}"
}

run_suite() {
    local label="$1" venv="$2" what="$3" out code line
    shift 3
    out="$LOGS/$label.log"
    log "pytest [$label: $what] $(versions_of "$venv/bin/python")"
    set +e
    "$venv/bin/python" -m pytest -p no:cacheprovider "$@" 2>&1 | tee "$out"
    code=${PIPESTATUS[0]}
    set -e
    line=$(grep -aE ' in [0-9.]+s( \([0-9:]+\))?$' "$out" | tail -n 1 | tr -d '=' | sed 's/^ *//')
    SUMMARY+=("$label: $(versions_of "$venv/bin/python"): $what: ${line:-no summary (see $out)}, exit $code")
    PASSED=$((PASSED + $(count_of passed "$line")))
    FAILED=$((FAILED + $(count_of failed "$line") + $(count_of error "$line")))
    [ "$code" -eq 0 ] || WORST=$code
}

# The newest Python 3 on this machine beyond the main venv's (PATH, then pyenv's versions).
newest_python() {
    local main_minor="$1" best="" best_minor="$1" candidate minor
    for candidate in ${ONNXSTUDIO_NEWEST_PYTHON:-} $(compgen -c python3. | sort -u) \
            "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
        minor=$("$candidate" -c 'import sys; print(sys.version_info[1])' 2>/dev/null) || continue
        if [ "$minor" -gt "$best_minor" ]; then best=$candidate; best_minor=$minor; fi
    done
    [ "$best_minor" -gt "$main_minor" ] && echo "$best"
    return 0
}

version_matrix() {
    local oldest="$VENV-oldest" constraints py minor newest
    # Oldest: every dependency at the floor pyproject.toml allows, the core tests.
    mkdir -p "$oldest"
    constraints="$oldest/constraints.txt"
    "$VENV/bin/python" scripts/oldest_constraints.py >"$constraints"
    if ensure_venv "$oldest" dev "$VENV/bin/python" "$constraints"; then
        run_suite oldest "$oldest" "core tests and the main window" -q "${CORE_TESTS[@]}"
    else
        SUMMARY+=("oldest: FAILED to install $(tr '\n' ' ' <"$constraints")"); WORST=1
    fi
    # Newest Python: the whole suite but the PyInstaller build (built once, by the main run).
    minor=$("$VENV/bin/python" -c 'import sys; print(sys.version_info[1])')
    newest=$(newest_python "$minor")
    if [ -z "$newest" ]; then
        SUMMARY+=("newest Python: skipped, none newer than 3.$minor here (looked for python3.N\
 on PATH and in pyenv; ONNXSTUDIO_NEWEST_PYTHON=/path/to/python names one)")
        return 0
    fi
    py="$VENV-py3.$("$newest" -c 'import sys; print(sys.version_info[1])')"
    if ensure_venv "$py" dev "$newest"; then
        run_suite "newest" "$py" "whole suite but the frozen app" -q -k "not frozen_app"
    else
        SUMMARY+=("newest: skipped, onnxstudio[dev] does not install on $("$newest" --version)")
    fi
}

cmd="${1:-run}"; shift || true
case "$cmd" in
    run)
        apt_install_missing "${QT_SYSTEM_PACKAGES[@]}"
        ensure_venv "$VENV" ""
        exec "$VENV/bin/onnxstudio" "$@"
        ;;
    test)
        apt_install_missing "${QT_SYSTEM_PACKAGES[@]}" "${TEST_SYSTEM_PACKAGES[@]}"
        ensure_venv "$VENV" dev
        apt_install_missing $(libpython_package "$VENV/bin/python")
        export QT_QPA_PLATFORM=offscreen
        log "ruff";  "$VENV/bin/ruff" check onnxstudio tests resources scripts
        log "import-linter"; "$VENV/bin/lint-imports"
        log "mypy"; "$VENV/bin/mypy"
        # With arguments, or ONNXSTUDIO_MATRIX=0: pytest alone, in the main venv.
        if [ $# -gt 0 ] || [ "${ONNXSTUDIO_MATRIX:-1}" = 0 ]; then
            log "pytest"; exec "$VENV/bin/python" -m pytest "$@"
        fi
        LOGS=$(mktemp -d "${TMPDIR:-/tmp}/onnxstudio-test-XXXXXX")
        run_suite main "$VENV" "whole suite" -q
        version_matrix
        log "versions tested (logs in $LOGS):"
        printf '  %s\n' "${SUMMARY[@]}" >&2
        # One closing line over every run, the form any CI log reader counts.
        echo "total: $PASSED passed, $FAILED failed"
        exit "$WORST"
        ;;
    bench)
        ensure_venv "$VENV" dev
        export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
        exec "$VENV/bin/python" -m tests.benchmarks.run "$@"
        ;;
    *)
        echo "usage: $0 run [MODEL...] | test [PYTEST ARGS] | bench [ARGS]" >&2; exit 2 ;;
esac
