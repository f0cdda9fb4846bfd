"""XDG base directories and the default-application lists (mimeapps.list, mimeinfo.cache).

Reads what a desktop would open a MIME type with, and adds or removes one default entry
while keeping every other line of the user's file as it was.
"""

from __future__ import annotations

import os
from pathlib import Path

from onnxstudio.desktop_integration.entry import DESKTOP_ID, MIME_TYPE


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


def write_text(path: Path, text: str) -> None:
    """Replace a file's text atomically (a crash never leaves a half-written mimeapps.list)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


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


def set_default(path: Path, mime: str, desktop_id: str) -> None:
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
    write_text(path, "\n".join(lines) + "\n")


def unset_default(path: Path, mime: str, desktop_id: str) -> bool:
    """Remove the entry `set_default` added (and a section it leaves empty).

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
        write_text(path, "".join(ln + "\n" for ln in keep))
    return not any(ln.strip() for ln in keep)
