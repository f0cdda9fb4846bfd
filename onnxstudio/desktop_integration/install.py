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

from onnxstudio.desktop_integration.entry import (
    APP_ID,
    DESKTOP_ID,
    ICON_SIZES,
    MIME_ICON,
    MIME_PACKAGE,
    MIME_TYPE,
    MIME_XML,
    desktop_entry,
    launch_command,
)
from onnxstudio.desktop_integration.xdg import (
    config_home,
    data_home,
    declared_handlers,
    explicit_defaults,
    set_default,
    unset_default,
    write_text,
)
from onnxstudio.errors import OnnxStudioError
from onnxstudio.resources import resource

MANIFEST_VERSION = 1


class DesktopIntegrationError(OnnxStudioError):
    """The desktop files could not be written or removed."""


def manifest_path() -> Path:
    return data_home() / APP_ID / "desktop-install.json"


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
        write_text(manifest_path(), json.dumps(data, indent=2) + "\n")


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


def _install_file(dest: Path, manifest: Manifest, *, text: str | None = None,
                  source: Path | None = None) -> None:
    _make_dirs(dest.parent, manifest)
    if text is not None:
        write_text(dest, text)
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
    set_default(target, MIME_TYPE, entry)
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
    default_entry = (manifest.default_entry if manifest else None) or DESKTOP_ID
    if manifest is None:  # manifest lost: still drop a default that would point nowhere
        unset_default(config_home() / "mimeapps.list", MIME_TYPE, DESKTOP_ID)
    removed = 0
    try:
        if mimeapps is not None:
            now_empty = unset_default(mimeapps, MIME_TYPE, default_entry)
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
