"""What the layout cache calls "the code": a digest of the sources a layout depends on.

Read from the sources when they are there; a frozen (PyInstaller) app carries only
compiled modules, so its build writes the digest into ``STAMP_NAME`` beside the package
(packaging/pyinstaller/onnxstudio.spec calls ``write_stamp``). Before that stamp the
frozen app found no sources, computed no fingerprint and ran without its cache.
"""

from __future__ import annotations

import hashlib
import string
import sys
from pathlib import Path

STAMP_NAME = "build_stamp.txt"
PARTS = ("layout", "model")  # the packages a layout is computed by


def package_root() -> Path:
    return Path(__file__).parent


def source_digest(root: Path) -> str | None:
    """SHA-256 of the ``PARTS`` sources under ``root`` (names and bytes); None if there
    are none or they cannot be read."""
    files = sorted(p for part in PARTS for p in (root / part).rglob("*.py"))
    if not files:
        return None
    digest = hashlib.sha256()
    try:
        for path in files:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    except OSError:
        return None
    return digest.hexdigest()


def code_digest(root: Path | None = None) -> str | None:
    """The sources' digest; in a frozen app the stamp its build wrote. None: no caching."""
    root = package_root() if root is None else root
    if not getattr(sys, "frozen", False):
        return source_digest(root)
    try:
        stamp = (root / STAMP_NAME).read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return stamp if len(stamp) == 64 and set(stamp) <= set(string.hexdigits) else None


def write_stamp(folder: Path, root: Path | None = None) -> Path:
    """Write the sources' digest into ``folder`` for a frozen build to carry."""
    digest = source_digest(package_root() if root is None else root)
    if digest is None:
        raise RuntimeError(f"no layout sources under {root or package_root()}")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / STAMP_NAME
    path.write_text(digest + "\n", "ascii")
    return path
