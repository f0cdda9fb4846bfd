"""Atomic file writing: a half-written or failed export never replaces a good file.

The data goes to a file without a name (Linux) or a hidden temporary file in the
destination's folder (same file system, so the final ``os.replace`` is atomic), is
fsynced, then renamed over the destination: an export killed midway, even by SIGKILL,
leaves no file behind where it can make unnamed ones. Any failure, cancel included,
removes the temporary file and leaves the destination untouched. Writing over the
model being exported is refused outright.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from onnxstudio.errors import ExportError

if TYPE_CHECKING:
    from onnxstudio.model.graph import Model

_umask_lock = threading.Lock()


def _umask() -> int:
    with _umask_lock:
        mask = os.umask(0)
        os.umask(mask)
    return mask


def protected_paths(model: Model | None) -> list[Path]:
    """The model file and its external-data files: never an export destination."""
    if model is None:
        return []
    paths = [Path(model.path)]
    folder = Path(model.path).parent
    graphs = [model.graph, *(f.body for f in model.functions)]
    for graph in graphs:
        for info in graph.initializers.values():
            if info.external_location:
                paths.append(folder / info.external_location)
    return paths


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_destination(path: str | Path, protect: Iterable[str | Path] = ()) -> Path:
    """Return the destination as a Path, or raise ExportError saying why it is unusable."""
    dest = Path(path).expanduser()
    for other in protect:
        if _same_file(dest, Path(other)):
            raise ExportError(f"{dest.name}: refusing to write over the model file itself")
    if dest.is_dir():
        raise ExportError(f"{dest}: is a folder, not a file name")
    if dest.exists() and not dest.is_file():  # e.g. a symlink to /dev/null or a FIFO
        raise ExportError(f"{dest}: is not a regular file (a device, pipe or socket); "
                          "refusing to replace it")
    parent = dest.parent if str(dest.parent) else Path(".")
    if not parent.is_dir():
        raise ExportError(f"{dest}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise ExportError(f"{dest}: folder {parent} is not writable")
    return dest


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not supported everywhere (Windows); best effort
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _unnamed_file(folder: Path) -> int:
    """A new file in ``folder`` without a name (Linux's O_TMPFILE), or -1 where the
    platform or file system has none: a writer killed, even by SIGKILL, before the
    file got its name leaves nothing behind."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not os.path.isdir("/proc/self/fd"):
        return -1
    try:
        return os.open(folder, flag | os.O_WRONLY, 0o600)
    except OSError:  # a file system without unnamed files
        return -1


def _name(fd: int, folder: Path, dest: Path) -> None:
    """Give the unnamed file ``fd`` the name ``dest``: linked under a hidden name first
    (a link never replaces a file), then renamed over ``dest`` at once."""
    fds = os.open("/proc/self/fd", os.O_RDONLY)
    try:
        while True:
            hidden = folder / f".{dest.stem}.{secrets.token_hex(4)}.tmp{dest.suffix}"
            try:  # linkat(AT_SYMLINK_FOLLOW), which a dir fd makes os.link call
                os.link(str(fd), hidden, src_dir_fd=fds, follow_symlinks=True)
                break
            except FileExistsError:
                continue
    finally:
        os.close(fds)
    try:
        os.replace(hidden, dest)
    finally:
        with contextlib.suppress(OSError):
            hidden.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_path(path: str | Path, protect: Iterable[str | Path] = ()) -> Iterator[Path]:
    """Yield a temporary path to write; on clean exit it replaces ``path`` atomically.

    For writers that want a file name (QPdfWriter, QSvgGenerator) rather than a stream.
    Where it can, the path is an unnamed file's (``/proc/self/fd/N``); elsewhere a
    hidden file beside ``path``, removed on failure (and by SIGTERM: see cli.py).
    """
    dest = check_destination(path, protect)
    parent = dest.parent if str(dest.parent) else Path(".")
    unnamed = _unnamed_file(parent)
    if unnamed >= 0:
        tmp = Path(f"/proc/self/fd/{unnamed}")
    else:
        try:
            fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.stem}.",
                                            suffix=f".tmp{dest.suffix}", dir=parent)
        except OSError as exc:
            raise ExportError(f"{dest}: cannot create a file there ({exc.strerror})") from exc
        os.close(fd)
        tmp = Path(tmp_name)
    try:
        yield tmp
        if not tmp.exists() or (tmp.stat().st_size == 0):
            raise ExportError(f"{dest.name}: nothing was written")
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        try:
            mode = dest.stat().st_mode & 0o777 if dest.is_file() else 0o666 & ~_umask()
            os.chmod(tmp, mode)
        except OSError:
            pass
        if unnamed >= 0:
            _name(unnamed, parent, dest)
        else:
            os.replace(tmp, dest)
        _fsync_dir(parent)
    except OSError as exc:
        raise ExportError(f"{dest}: could not be written ({exc.strerror or exc})") from exc
    finally:
        if unnamed >= 0:
            os.close(unnamed)
        else:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)


def atomic_write(path: str | Path, data: bytes | str | Callable[[IO[bytes]], None],
                 protect: Iterable[str | Path] = ()) -> Path:
    """Write bytes, text (UTF-8) or whatever ``data(stream)`` writes, atomically."""
    with atomic_path(path, protect) as tmp, open(tmp, "wb") as handle:
        if callable(data):
            data(handle)
        elif isinstance(data, str):
            handle.write(data.encode("utf-8"))
        else:
            handle.write(data)
    return Path(path)
