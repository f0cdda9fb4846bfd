"""Atomic file writing: a half-written or failed export never replaces a good file.

The data goes to a hidden temporary file in the destination's folder (same file
system, so the final ``os.replace`` is atomic), is fsynced, then renamed over the
destination. Any failure, cancel included, removes the temporary file and leaves the
destination untouched. Writing over the model being exported is refused outright.
"""

from __future__ import annotations

import contextlib
import os
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


@contextlib.contextmanager
def atomic_path(path: str | Path, protect: Iterable[str | Path] = ()) -> Iterator[Path]:
    """Yield a temporary path to write; on clean exit it replaces ``path`` atomically.

    For writers that want a file name (QPdfWriter, QSvgGenerator) rather than a stream.
    """
    dest = check_destination(path, protect)
    parent = dest.parent if str(dest.parent) else Path(".")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.stem}.", suffix=f".tmp{dest.suffix}",
                                        dir=parent)
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
        os.replace(tmp, dest)
        _fsync_dir(parent)
    except OSError as exc:
        raise ExportError(f"{dest}: could not be written ({exc.strerror or exc})") from exc
    finally:
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
