"""`onnxstudio --install-desktop` / `--uninstall-desktop`: register the app for this user.

Follows the XDG specs so every Linux desktop picks it up: a desktop entry in
`$XDG_DATA_HOME/applications`, a shared-mime-info package declaring `application/x-onnx`,
hicolor icons, and - only when no other application already handles `.onnx` files - the
default-application entry in `$XDG_CONFIG_HOME/mimeapps.list`. What was written is recorded
in a manifest so uninstalling removes exactly that and nothing the user made.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from onnxstudio.errors import OnnxStudioError
from onnxstudio.resources import resource

APP_ID = "onnxstudio"
DESKTOP_ID = "onnxstudio.desktop"
MIME_TYPE = "application/x-onnx"
MIME_ICON = "application-x-onnx"
MIME_PACKAGE = "onnxstudio.xml"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
MANIFEST_VERSION = 1

DESKTOP_TEMPLATE = """\
[Desktop Entry]
Type=Application
Version=1.4
Name=onnxstudio
GenericName=ONNX Model Viewer
Comment=See, inspect, run and export ONNX models
Icon=onnxstudio
TryExec={try_exec}
Exec={exec} %F
Terminal=false
Categories=Development;Qt;
MimeType=application/x-onnx;
Keywords=ONNX;neural;network;model;graph;viewer;inference;machine learning;
StartupNotify=true
StartupWMClass=onnxstudio
"""

MIME_XML = """\
<?xml version="1.0" encoding="UTF-8"?>
<!-- ONNX models (https://onnx.ai): a protobuf ModelProto with no signature bytes, so the
     type is recognised by its extension only; a weak magic would mislabel other files. -->
<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <mime-type type="application/x-onnx">
    <comment>ONNX model</comment>
    <acronym>ONNX</acronym>
    <expanded-acronym>Open Neural Network Exchange</expanded-acronym>
    <icon name="application-x-onnx"/>
    <glob pattern="*.onnx"/>
  </mime-type>
</mime-info>
"""


class DesktopIntegrationError(OnnxStudioError):
    """The desktop files could not be written or removed."""


# ---------------------------------------------------------------- XDG locations


def _env_dir(name: str, default: Path) -> Path:
    value = os.environ.get(name, "")
    return Path(value) if value and os.path.isabs(value) else default


def data_home() -> Path:
    return _env_dir("XDG_DATA_HOME", Path.home() / ".local" / "share")


def config_home() -> Path:
    return _env_dir("XDG_CONFIG_HOME", Path.home() / ".config")


def _dir_list(name: str, default: str) -> list[Path]:
    return [Path(p) for p in (os.environ.get(name) or default).split(":") if os.path.isabs(p)]


def data_dirs() -> list[Path]:
    return _dir_list("XDG_DATA_DIRS", "/usr/local/share:/usr/share")


def config_dirs() -> list[Path]:
    return _dir_list("XDG_CONFIG_DIRS", "/etc/xdg")


def manifest_path() -> Path:
    return data_home() / APP_ID / "desktop-install.json"


# ---------------------------------------------------------------- the desktop entry


_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def quote_exec_arg(arg: str) -> str:
    """Quote one Exec= argument as the Desktop Entry spec requires, then escape for a string."""
    arg = arg.replace("%", "%%")
    if not arg or any(c in _RESERVED for c in arg):
        inner = "".join("\\" + c if c in '"`$\\' else c for c in arg)
        arg = f'"{inner}"'
    return arg.replace("\\", "\\\\")


def launch_command() -> list[str]:
    """The command that starts this very installation, as absolute paths.

    A frozen app is its own executable; in a virtual environment the console script next
    to the interpreter is used (it need not be on the desktop session's PATH); failing
    that, `python -m onnxstudio` with the current interpreter, plus PYTHONPATH when the
    package is only importable from a source checkout.
    """
    if getattr(sys, "frozen", False):
        return [os.path.abspath(sys.executable)]
    script = Path(sys.executable).parent / APP_ID  # do not resolve: venvs symlink python
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute())]
    found = shutil.which(APP_ID)
    if found:
        return [os.path.abspath(found)]
    command = [os.path.abspath(sys.executable), "-m", APP_ID]
    if not _importable_from_anywhere():
        source_root = Path(__file__).resolve().parent.parent
        command = ["env", f"PYTHONPATH={source_root}", *command]
    return command


def _importable_from_anywhere() -> bool:
    """Whether a fresh interpreter started from a launcher (cwd: home) finds the package."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = subprocess.run(
        [sys.executable, "-c", f"import {APP_ID}"], cwd=Path.home() if Path.home().is_dir()
        else "/", env=env, capture_output=True, check=False,
    )
    return probe.returncode == 0


def _program(command: list[str]) -> str:
    """The executable a command runs (past `env VAR=value`), for TryExec."""
    rest = command[1:] if command[0] == "env" else command
    return next((a for a in rest if "=" not in a), command[0])


def desktop_entry(command: list[str] | None = None) -> str:
    """The desktop entry text; with no command, the generic one in packaging/linux/."""
    if command is None:
        return DESKTOP_TEMPLATE.format(exec=APP_ID, try_exec=APP_ID)
    return DESKTOP_TEMPLATE.format(
        exec=" ".join(quote_exec_arg(a) for a in command),
        try_exec=_program(command).replace("\\", "\\\\"),  # a plain string, not Exec-quoted
    )


# ---------------------------------------------------------------- default application


def _default_entries(text: str, mime: str) -> list[str]:
    """Desktop ids that a mimeapps.list's [Default Applications] names for a MIME type."""
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[Default Applications]" and line.split("=", 1)[0].strip() == mime:
            return [d for d in line.split("=", 1)[1].split(";") if d.strip()]
    return []


def _mimeapps_lists() -> list[Path]:
    desktops = [d.lower() for d in os.environ.get("XDG_CURRENT_DESKTOP", "").split(":") if d]
    folders = [config_home(), *config_dirs(), data_home() / "applications",
               *(d / "applications" for d in data_dirs())]
    return [f / f"{prefix}mimeapps.list" for f in folders
            for prefix in [*(d + "-" for d in desktops), ""]]


def _application_dirs() -> list[Path]:
    return [data_home() / "applications", *(d / "applications" for d in data_dirs())]


def explicit_defaults(mime: str = MIME_TYPE) -> list[str]:
    """Desktop ids that some mimeapps.list names as the default for the MIME type."""
    found: list[str] = []
    for path in _mimeapps_lists():
        try:
            found += _default_entries(path.read_text(encoding="utf-8", errors="replace"), mime)
        except OSError:
            continue
    return found


def _cache_handlers(folder: Path, mime: str) -> list[str]:
    """Handlers in the order update-desktop-database's mimeinfo.cache lists them."""
    try:
        text = (folder / "mimeinfo.cache").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    for line in text.splitlines():
        if line.split("=", 1)[0] == mime:
            return [d for d in line.split("=", 1)[1].split(";") if d]
    return []


def declared_handlers(mime: str = MIME_TYPE) -> list[str]:
    """Other applications whose desktop entry declares the MIME type, first-preferred first.

    Without an explicit default, desktops open the first of these, so this order is the
    one the user currently experiences.
    """
    found: list[str] = []
    for folder in _application_dirs():
        if not folder.is_dir():
            continue
        found += _cache_handlers(folder, mime)
        for entry in sorted(folder.rglob("*.desktop")):
            try:
                text = entry.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                if line.startswith("MimeType=") and mime in line[9:].split(";"):
                    found.append(entry.relative_to(folder).as_posix().replace("/", "-"))
    return [d for d in dict.fromkeys(found) if d != DESKTOP_ID]


def _set_default(path: Path, mime: str, desktop_id: str) -> None:
    """Add `mime=desktop_id;` to [Default Applications], keeping everything else as it was."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    entry = f"{mime}={desktop_id};"
    if entry in (ln.strip() for ln in lines):
        return
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == "[Default Applications]")
    except StopIteration:
        if lines and lines[-1].strip():
            lines.append("")
        lines += ["[Default Applications]", entry]
    else:
        lines.insert(start + 1, entry)
    _write_text(path, "\n".join(lines) + "\n")


def _unset_default(path: Path, mime: str, desktop_id: str) -> bool:
    """Remove the entry `_set_default` added (and a section it leaves empty).

    Returns True when nothing is left in the file.
    """
    if not path.exists():
        return False
    lines = path.read_text(encoding="utf-8").splitlines()
    keep = [ln for ln in lines if ln.strip() != f"{mime}={desktop_id};"]
    if keep != lines:
        for i, ln in enumerate(keep):
            rest = keep[i + 1:]
            if ln.strip() == "[Default Applications]" and all(
                not r.strip() for r in rest[:next((j for j, r in enumerate(rest)
                                                   if r.startswith("[")), len(rest))]
            ):
                del keep[i]
                if i > 0 and not keep[i - 1].strip():
                    del keep[i - 1]
                break
        _write_text(path, "".join(ln + "\n" for ln in keep))
    return not any(ln.strip() for ln in keep)


# ---------------------------------------------------------------- install / uninstall


@dataclass
class Manifest:
    """What an install wrote, so that uninstall removes exactly that."""

    files: list[str] = field(default_factory=list)
    created_dirs: list[str] = field(default_factory=list)
    default_set_in: str | None = None  # the mimeapps.list we added a default entry to
    default_entry: str | None = None  # which desktop id that entry names
    command: list[str] = field(default_factory=list)
    caches_created: list[str] = field(default_factory=list)

    @classmethod
    def load(cls) -> Manifest | None:
        try:
            data = json.loads(manifest_path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return cls(files=list(data.get("files", [])),
                   created_dirs=list(data.get("created_dirs", [])),
                   default_set_in=data.get("default_set_in"),
                   default_entry=data.get("default_entry"),
                   command=list(data.get("command", [])),
                   caches_created=list(data.get("caches_created", [])))

    def save(self) -> None:
        data = {"version": MANIFEST_VERSION, "files": self.files,
                "created_dirs": self.created_dirs, "default_set_in": self.default_set_in,
                "default_entry": self.default_entry,
                "command": self.command, "caches_created": self.caches_created}
        _write_text(manifest_path(), json.dumps(data, indent=2) + "\n")


def _make_dirs(path: Path, manifest: Manifest | None) -> None:
    """mkdir -p, remembering each folder this created (uninstall removes them if empty)."""
    missing: list[Path] = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir()
        if manifest is not None and str(d) not in manifest.created_dirs:
            manifest.created_dirs.append(str(d))


def _write_text(path: Path, text: str, manifest: Manifest | None = None) -> None:
    _make_dirs(path.parent, manifest)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _install_file(dest: Path, manifest: Manifest, *, text: str | None = None,
                  source: Path | None = None) -> None:
    _make_dirs(dest.parent, manifest)
    if text is not None:
        _write_text(dest, text)
    else:
        assert source is not None
        shutil.copyfile(source, dest)
    if str(dest) not in manifest.files:
        manifest.files.append(str(dest))


def _icon_files() -> list[tuple[Path, Path]]:
    """(source, destination relative to the user's hicolor theme) for every icon."""
    icons = resource("icons")
    pairs = [(icons / "onnxstudio.svg", Path("scalable/apps/onnxstudio.svg")),
             (icons / f"{MIME_ICON}.svg", Path(f"scalable/mimetypes/{MIME_ICON}.svg"))]
    for size in ICON_SIZES:
        for context, name in (("apps", APP_ID), ("mimetypes", MIME_ICON)):
            rel = Path(f"{size}x{size}") / context / f"{name}.png"
            pairs.append((icons / "hicolor" / rel, rel))
    return pairs


def _run_tool(argv: list[str], messages: list[str]) -> None:
    """Refresh a desktop cache if the tool exists; its absence only delays the pickup."""
    if shutil.which(argv[0]) is None:
        messages.append(f"{argv[0]} not found: the desktop picks the change up at next login")
        return
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        messages.append(f"{argv[0]} failed: {result.stderr.strip() or result.returncode}")


def _refresh(messages: list[str]) -> None:
    mime_dir = data_home() / "mime"
    if (mime_dir / "packages").is_dir():
        _run_tool(["update-mime-database", str(mime_dir)], messages)
    apps = data_home() / "applications"
    if apps.is_dir():
        _run_tool(["update-desktop-database", "-q", str(apps)], messages)
    hicolor = data_home() / "icons" / "hicolor"
    if hicolor.is_dir():
        os.utime(hicolor)  # icon caches compare the theme folder's mtime


def _choose_default(manifest: Manifest, explicit: list[str], declared: list[str],
                    messages: list[str]) -> None:
    """Become the default only where nothing else opens .onnx files.

    With another viewer chosen explicitly, nothing changes. With one that is only
    declared (the default by precedence), our own entry could outrank it, so that choice
    is written down explicitly, which keeps what the user had; uninstall removes it again.
    """
    howto = (f"To make onnxstudio the default: xdg-mime default {DESKTOP_ID} {MIME_TYPE}")
    if explicit:
        messages.append(f".onnx files open with {explicit[0]}; onnxstudio was added to "
                        f"'Open With' but not made the default. {howto}")
        return
    entry = declared[0] if declared else DESKTOP_ID
    target = config_home() / "mimeapps.list"
    _make_dirs(target.parent, manifest)
    if not target.exists():
        manifest.files.append(str(target))  # ours: removed again if left empty
    _set_default(target, MIME_TYPE, entry)
    manifest.default_set_in, manifest.default_entry = str(target), entry
    if declared:
        messages.append(f".onnx files open with {entry}; it stays the default and "
                        f"onnxstudio was added to 'Open With'. {howto}")
    else:
        messages.append(f"onnxstudio is now the default application for {MIME_TYPE}")


def install() -> list[str]:
    """Register the app, the file type and the icons; returns lines to show the user."""
    messages: list[str] = []
    previous = Manifest.load()
    manifest = previous or Manifest()
    manifest.command = launch_command()
    # Look before our own entry exists: what opens .onnx files for this user right now?
    explicit = [d for d in explicit_defaults() if d != DESKTOP_ID]
    declared = declared_handlers()
    try:
        apps = data_home() / "applications"
        _install_file(apps / DESKTOP_ID, manifest, text=desktop_entry(manifest.command))
        _install_file(data_home() / "mime" / "packages" / MIME_PACKAGE, manifest,
                      text=MIME_XML)
        hicolor = data_home() / "icons" / "hicolor"
        for source, rel in _icon_files():
            if source.is_file():
                _install_file(hicolor / rel, manifest, source=source)
            else:
                messages.append(f"icon missing from this installation: {source}")

        if manifest.default_set_in is None:
            _choose_default(manifest, explicit, declared, messages)
        cache = data_home() / "applications" / "mimeinfo.cache"
        if not cache.exists() and str(cache) not in manifest.caches_created:
            manifest.caches_created.append(str(cache))  # update-desktop-database makes it
        manifest.save()
    except OSError as exc:
        raise DesktopIntegrationError(f"cannot install the desktop files: {exc}") from exc
    _refresh(messages)
    messages.insert(0, f"installed {DESKTOP_ID} (Exec: {' '.join(manifest.command)}) "
                       f"into {data_home()}")
    return messages


def _known_files() -> list[str]:
    """What an install writes, for uninstalling when the manifest was lost."""
    hicolor = data_home() / "icons" / "hicolor"
    paths = [data_home() / "applications" / DESKTOP_ID,
             data_home() / "mime" / "packages" / MIME_PACKAGE,
             *(hicolor / rel for _, rel in _icon_files())]
    return [str(p) for p in paths]


def _remove_generated_and_empty(created: list[str]) -> None:
    """Remove folders the install created, once nothing but generated caches is left."""
    for d in sorted((Path(p) for p in created), key=lambda p: len(p.parts), reverse=True):
        if not d.is_dir():
            continue
        if d == data_home() / "mime":
            packages = d / "packages"
            if not packages.exists() or not any(packages.iterdir()):
                shutil.rmtree(d, ignore_errors=True)  # the rest is update-mime-database output
            continue
        if d == data_home() / "applications":
            cache = d / "mimeinfo.cache"
            if cache.exists() and [p.name for p in d.iterdir()] == ["mimeinfo.cache"]:
                cache.unlink()
        with contextlib.suppress(OSError):  # not empty: something else lives there now
            d.rmdir()


def uninstall() -> list[str]:
    """Undo `install()`: our files, our default entry, folders we created if left empty."""
    messages: list[str] = []
    manifest = Manifest.load()
    files = manifest.files if manifest else _known_files()
    mimeapps = Path(manifest.default_set_in) if manifest and manifest.default_set_in else None
    if manifest is None:  # manifest lost: still drop a default that would point nowhere
        _unset_default(config_home() / "mimeapps.list", MIME_TYPE, DESKTOP_ID)
    removed = 0
    try:
        if mimeapps is not None:
            now_empty = _unset_default(mimeapps, MIME_TYPE,
                                       manifest.default_entry or DESKTOP_ID)
            if now_empty and str(mimeapps) in files:
                mimeapps.unlink()
            files = [f for f in files if f != str(mimeapps)]
        for f in files:
            p = Path(f)
            if p.is_file() or p.is_symlink():
                p.unlink()
                removed += 1
        manifest_path().unlink(missing_ok=True)
    except OSError as exc:
        raise DesktopIntegrationError(f"cannot remove the desktop files: {exc}") from exc
    _refresh(messages)
    for cache in manifest.caches_created if manifest else []:
        # It did not exist before the install (desktops work without it): back to that.
        Path(cache).unlink(missing_ok=True)
    created = manifest.created_dirs if manifest else []
    _remove_generated_and_empty([*created, str(manifest_path().parent)] if manifest else [])
    messages.insert(0, f"removed {removed} file(s) from {data_home()}"
                    if removed else "nothing to remove: onnxstudio was not installed here")
    return messages


def run(args: argparse.Namespace) -> int:
    """CLI handler for --install-desktop / --uninstall-desktop."""
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        print("onnxstudio: --install-desktop is for Linux/BSD desktops; use the installer "
              "on Windows and macOS", file=sys.stderr)
        return 2
    lines = uninstall() if getattr(args, "uninstall_desktop", False) else install()
    for line in lines:
        print(line)
    return 0
