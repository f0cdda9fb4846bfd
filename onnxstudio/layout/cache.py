"""Layouts kept on disk, keyed by the model file's content: a second open is not laid out.

``layout_model`` is ``build_layout`` for a whole model (its local functions expand in
place). When the model is a file's unedited content (``model.source``), the result is
looked up under a key made of everything it depends on: the file's bytes (SHA-256;
weights in external data are never read by the loader, so they cannot change a
layout), how its value types were set (declared, or inferred by onnx), the expand state,
the direction, and the code (package version, a hash of the layout and model sources,
onnx's and onnxruntime's versions, whose schemas name input slots). Text widths come
from tables in the code (textmetrics.py), so no font or screen enters the key.

Entries live in ``$XDG_CACHE_HOME/onnxstudio/layouts`` (``~/.cache``), only for layouts
that took ``MIN_SECONDS``, the least recently used going past ``MAX_BYTES``. A file's
digest is remembered by its path and stat stamp, so a reopen does not hash it again.
Anything wrong with the cache (unreadable, corrupt, another version, disk full) only
means laying out as if it were empty. ``ONNXSTUDIO_NO_LAYOUT_CACHE=1`` turns it off.

An entry is a run of pickles (protocol 5; a columnar encoding measured no faster to
load, since rebuilding 100k dataclasses in Python costs what unpickling them does),
each of at most ``CHUNK`` objects: one ``pickle.loads`` of a big layout would hold the
GIL for up to a second, while between chunks the GUI thread gets its turn. A SHA-256 of
the payload guards against a damaged file, and only the layout's own classes unpickle.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import onnxstudio
from onnxstudio.layout.build import build_layout
from onnxstudio.layout.layered import LayoutCancelled
from onnxstudio.layout.state import ExpandState
from onnxstudio.layout.types import Box, Direction, Edge, GroupFrame, Layout
from onnxstudio.model.graph import Model
from onnxstudio.model.source import FileSource, file_stamp, read_from

ENV_OFF = "ONNXSTUDIO_NO_LAYOUT_CACHE"
MIN_SECONDS = 0.2  # quicker layouts are not worth a file
MAX_BYTES = 256 * 2**20
MAX_FILES = 4096
CHUNK = 1000  # objects per pickle: unpickling one takes ~5 ms
MAGIC = b"onnxstudio-layout-cache 1\n"
RACY_SECONDS = 2.0  # a file changed this recently may change again within its mtime tick
HASH_RATE = 400e6  # bytes/s of SHA-256 (reading included) on a slow machine
HASH_SHARE = 0.25  # a file is hashed only if that costs at most this share of its layout
_CLASSES = {("onnxstudio.layout.types", c.__name__): c for c in (Box, Edge, GroupFrame)}


def layout_model(model: Model, state: ExpandState, direction: Direction = "TB",
                 cancel: Callable[[], bool] | None = None,
                 progress: Callable[[float], None] | None = None) -> Layout:
    """``build_layout`` of ``model`` with its local functions, from the cache if it can."""
    source = read_from(model) if enabled() else None
    code = code_fingerprint() if source is not None else None
    content = None
    if source is not None and code is not None:
        content = known_digest(source)
        if content is not None:
            cached = load(entry_key(code, content, source, state, direction), cancel)
            if cached is not None:
                if progress is not None:
                    progress(1.0)
                return cached
    started = time.perf_counter()
    functions = {f.key: f.body for f in model.functions}
    layout = build_layout(model.graph, state, direction, cancel, progress, functions=functions)
    seconds = time.perf_counter() - started
    if source is not None and code is not None and seconds >= MIN_SECONDS:
        content = content or file_digest(source, budget=seconds * HASH_SHARE)
        if content is not None:
            store(entry_key(code, content, source, state, direction), layout)
    return layout


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "onnxstudio" / "layouts"


def enabled() -> bool:
    return os.environ.get(ENV_OFF, "").strip().lower() in ("", "0", "false", "no")


@functools.cache
def code_fingerprint() -> str | None:
    """What a layout's code is: our version, layout/ and model/ sources, the schemas'
    sources; None (no caching) when the sources cannot be read."""
    digest = hashlib.sha256()
    for part in (onnxstudio.__version__, sys.version, *_versions("onnx", "onnxruntime")):
        digest.update(part.encode() + b"\0")
    root = Path(onnxstudio.__file__).parent
    files = sorted(p for d in ("layout", "model") for p in (root / d).rglob("*.py"))
    try:
        for path in files:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    except OSError:
        return None
    return digest.hexdigest() if files else None


def _versions(*names: str) -> Iterator[str]:
    for name in names:
        try:
            yield f"{name}={metadata.version(name)}"
        except metadata.PackageNotFoundError:
            yield f"{name}=none"


def entry_key(code: str, content: str, source: FileSource, state: ExpandState,
              direction: Direction) -> str:
    """The name of the entry for this file, code, state and direction."""
    digest = hashlib.sha256()
    for part in (code, content, source.shapes, direction):
        digest.update(part.encode() + b"\0")
    for ids in (state.groups, state.nodes):
        digest.update("\n".join(sorted(ids)).encode() + b"\0\0")
    return digest.hexdigest()


def known_digest(source: FileSource) -> str | None:
    """The file's SHA-256 if it was taken before (a file never cached is not hashed: that
    would cost every open of a big model for nothing); None if the file changed since
    the model was read from it."""
    if file_stamp(source.path) != source.stamp:
        return None
    try:
        digest, hashed_ns = _memo(source).read_text("ascii").split()
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if int(hashed_ns) - source.stamp[1] > RACY_SECONDS * 1e9:
        return digest
    # Hashed within the file's mtime tick, it may have changed since unseen: hash again.
    return file_digest(source, budget=None)


def file_digest(source: FileSource, budget: float | None) -> str | None:
    """SHA-256 of the file's bytes as the model was read (None if they changed since, or
    if hashing would take over ``budget`` seconds), remembered under its path and stamp."""
    if budget is not None and source.stamp[0] > budget * HASH_RATE:
        return None
    hashed_ns = time.time_ns()
    digest = hashlib.sha256()
    try:
        with open(source.path, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)  # reading and hashing both release the GIL
    except OSError:
        return None
    if file_stamp(source.path) != source.stamp:  # written to before or while we read it
        return None
    content = digest.hexdigest()
    _write(_memo(source), f"{content} {hashed_ns}".encode())
    return content


def _memo(source: FileSource) -> Path:
    name = f"{source.path.resolve()}\0{source.stamp}"
    return cache_dir() / f"{hashlib.sha256(name.encode()).hexdigest()}.digest"


# -- entries -------------------------------------------------------------------------


def load(key: str, cancel: Callable[[], bool] | None = None) -> Layout | None:
    """The layout stored under ``key``, or None (missing, damaged, or from elsewhere)."""
    path = cache_dir() / f"{key}.layout"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        layout = _decode(data, key, cancel)
    except LayoutCancelled:
        raise
    except Exception:  # a damaged entry is only a miss
        layout = None
    if layout is None:
        _unlink(path)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # most recently used
    return layout


def store(key: str, layout: Layout) -> None:
    """Keep ``layout`` under ``key`` (quietly nothing if the disk says no)."""
    if _write(cache_dir() / f"{key}.layout", _encode(key, layout)):
        prune()


def prune(max_bytes: int = MAX_BYTES, max_files: int = MAX_FILES) -> None:
    """Delete the least recently used entries until the cache fits its bounds."""
    entries = []
    try:
        for entry in os.scandir(cache_dir()):
            st = entry.stat()
            entries.append((st.st_mtime_ns, st.st_size, entry.path))
    except OSError:
        return
    entries.sort()
    total = sum(size for _, size, _ in entries)
    count = len(entries)
    for _, size, path in entries:
        if total <= max_bytes and count <= max_files:
            break
        if _unlink(Path(path)):
            total -= size
            count -= 1


def _encode(key: str, layout: Layout) -> bytes:
    body = io.BytesIO()
    header = (layout.direction, layout.width, layout.height)
    pickle.dump(header, body, 5)
    for items in (layout.boxes, layout.groups, layout.edges):
        pickle.dump(len(items), body, 5)
        for start in range(0, len(items), CHUNK):
            pickle.dump(items[start:start + CHUNK], body, 5)
    payload = body.getvalue()
    return MAGIC + _check(key, payload) + payload


def _decode(data: bytes, key: str, cancel: Callable[[], bool] | None) -> Layout | None:
    head = len(MAGIC) + 32
    if data[:len(MAGIC)] != MAGIC:
        return None
    payload = memoryview(data)[head:]
    if _check(key, payload) != data[len(MAGIC):head]:
        return None
    stream = io.BytesIO(payload)
    direction, width, height = _Unpickler(stream).load()
    parts: list[list[Any]] = []
    for kind in (Box, GroupFrame, Edge):
        count = _Unpickler(stream).load()
        items: list[Any] = []
        while len(items) < count:
            if cancel is not None and cancel():
                raise LayoutCancelled
            items.extend(_Unpickler(stream).load())  # one chunk: the GIL is free between
        if not all(type(item) is kind for item in items):
            return None
        parts.append(items)
    boxes, groups, edges = parts
    return Layout(direction, width, height, boxes, groups, edges)


def _check(key: str, payload: bytes | memoryview) -> bytes:
    digest = hashlib.sha256(key.encode())
    digest.update(payload)  # releases the GIL
    return digest.digest()


class _Unpickler(pickle.Unpickler):
    """Unpickles the layout's own classes and nothing else (no code runs)."""

    def find_class(self, module: str, name: str) -> Any:
        cls = _CLASSES.get((module, name))
        if cls is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a layout")
        return cls


def _write(path: Path, data: bytes) -> bool:
    """Write atomically (temp file, then rename); False if it could not be done."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            _unlink(Path(tmp))
        return False


def _unlink(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except OSError:
        return False
