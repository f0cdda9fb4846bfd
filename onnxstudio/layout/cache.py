"""Layouts kept on disk, keyed by the model file's content: a second open is not laid out.

``layout_model`` is ``build_layout`` for a whole model (its local functions expand in
place). When the model is a file's unedited content (model/source.py), the result is
looked up under a key made of everything it depends on: the file's bytes (SHA-256;
weights in external data are never read by the loader, so they cannot change a
layout), how its value types were set (declared, or inferred by onnx), the expand state,
the direction, and the code (package version, a hash of the layout and model sources,
onnx's and onnxruntime's versions, whose schemas name input slots). Text widths come
from tables in the code (textmetrics.py), so no font or screen enters the key.

Entries live in ``$XDG_CACHE_HOME/onnxstudio/layouts`` (``~/.cache``), only for layouts
that took ``MIN_SECONDS`` of CPU, the least recently used going past ``MAX_BYTES``. A
file is hashed only once something of it proved worth keeping, and only when hashing
costs at most ``HASH_SHARE`` of that; its digest is remembered by its path and stat
stamp, so a reopen does not hash it again.
Anything wrong with the cache (unreadable, corrupt, another version, disk full) only
means laying out as if it were empty. ``ONNXSTUDIO_NO_LAYOUT_CACHE=1`` turns it off.

The scope tree a model's default expand state is computed from (1.4 s of dag100k's
2.3 s "layout") is kept the same way (``scope_tree``): a reopen needs neither.
Entries are encoded by cache_codec.py, checked by a SHA-256 of their payload (and key)
and written by rename.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import onnxstudio
from onnxstudio.build_stamp import code_digest
from onnxstudio.layout.build import build_layout
from onnxstudio.layout.cache_codec import decode_layout, decode_tree, encode_layout, encode_tree
from onnxstudio.layout.layered import LayoutCancelled
from onnxstudio.layout.scope_tree import ScopeTree
from onnxstudio.layout.scopes import graph_scope_tree, remember_scope_tree
from onnxstudio.layout.state import ExpandState
from onnxstudio.layout.types import Direction, Layout
from onnxstudio.model.graph import Model
from onnxstudio.model.source import FileSource, file_stamp, read_from

ENV_OFF = "ONNXSTUDIO_NO_LAYOUT_CACHE"
MIN_SECONDS = 0.2  # of CPU: quicker layouts are not worth a file
MAX_BYTES = 256 * 2**20
MAX_FILES = 4096
MAGIC = b"onnxstudio-layout-cache 2\n"
RACY_SECONDS = 2.0  # a file changed this recently may change again within its mtime tick
HASH_RATE = 400e6  # bytes/s of SHA-256 (reading included) on a slow machine
HASH_SHARE = 0.25  # a file is hashed only if that costs at most this share of its layout
T = TypeVar("T")
Cancel = Callable[[], bool] | None


def layout_model(model: Model, state: ExpandState, direction: Direction = "TB",
                 cancel: Cancel = None,
                 progress: Callable[[float], None] | None = None) -> Layout:
    """``build_layout`` of ``model`` with its local functions, from the cache if it can."""
    def build() -> Layout:
        functions = {f.key: f.body for f in model.functions}
        return build_layout(model.graph, state, direction, cancel, progress,
                            functions=functions)

    layout, cached = _through_cache(model, _state_key(state, direction), "layout", build,
                                    encode_layout, decode_layout, cancel)
    if cached and progress is not None:
        progress(1.0)
    return layout


def scope_tree(model: Model, cancel: Cancel = None) -> ScopeTree:
    """``graph_scope_tree`` of the model's main graph, from the cache if it can (and
    remembered for the graph, so the default state and the layout reuse it)."""
    def fetch() -> ScopeTree:
        tree, cached = _through_cache(model, "", "tree", lambda: graph_scope_tree(model.graph),
                                      encode_tree, decode_tree, cancel)
        if cached:
            remember_scope_tree(model.graph, tree)
        return tree

    return model.memo("layout:scope_tree", fetch)


def _through_cache(model: Model, what: str, kind: str, build: Callable[[], T],
                   encode: Callable[[T], bytes | None],
                   decode: Callable[[memoryview, Cancel], T | None],
                   cancel: Cancel) -> tuple[T, bool]:
    """``build()``, or what the cache holds for it: (result, whether it came from there)."""
    source = read_from(model) if enabled() else None
    code = code_fingerprint() if source is not None else None
    content = None
    if source is not None and code is not None:
        content = known_digest(source)
        if content is not None:
            found = load(entry_key(code, content, source, what), kind, decode, cancel)
            if found is not None:
                return found, True
    started = time.thread_time()  # the work itself, whatever the machine's load
    result = build()
    seconds = time.thread_time() - started
    if source is not None and code is not None and seconds >= MIN_SECONDS:
        def keep() -> None:
            digest = content or file_digest(source, budget=seconds * HASH_SHARE)
            if digest is not None:
                store(entry_key(code, digest, source, what), kind, encode, result)

        later = getattr(_later, "stores", None)
        if later is not None:
            later.append(keep)
        else:
            keep()
    return result, False


_later = threading.local()


@contextlib.contextmanager
def stores_later() -> Iterator[list[Callable[[], None]]]:
    """Within, on this thread: what would be kept is queued instead, for the caller to
    write later. The CLI export hashes and encodes BERT-96's layout (80 ms) once its
    file is written; the window's workers keep as they go."""
    outer = getattr(_later, "stores", None)
    queued: list[Callable[[], None]] = []
    _later.stores = queued
    try:
        yield queued
    finally:
        _later.stores = outer


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "onnxstudio" / "layouts"


def enabled() -> bool:
    return os.environ.get(ENV_OFF, "").strip().lower() in ("", "0", "false", "no")


@functools.cache
def code_fingerprint() -> str | None:
    """What a layout's code is: our version, layout/ and model/ sources (a frozen app's
    build stamp), the schemas' sources; None (no caching) when there are none."""
    code = code_digest()
    if code is None:
        return None
    digest = hashlib.sha256()
    for part in (onnxstudio.__version__, sys.version, *_versions("onnx", "onnxruntime"), code):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def _versions(*names: str) -> Iterator[str]:
    from importlib import metadata  # 10 ms of imports: only when the cache is on

    for name in names:
        try:
            yield f"{name}={metadata.version(name)}"
        except metadata.PackageNotFoundError:
            yield f"{name}=none"


def entry_key(code: str, content: str, source: FileSource, what: str) -> str:
    """The name of the entry for this code, file, way of typing it and ``what``."""
    digest = hashlib.sha256()
    for part in (code, content, source.shapes, what):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def _state_key(state: ExpandState, direction: Direction) -> str:
    groups, nodes = ("\n".join(sorted(ids)) for ids in (state.groups, state.nodes))
    return f"{direction}\0{groups}\0\0{nodes}"


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


def load(key: str, kind: str, decode: Callable[[memoryview, Cancel], T | None],
         cancel: Cancel = None) -> T | None:
    """What is stored under ``key``, or None (missing, damaged, or from elsewhere)."""
    path = cache_dir() / f"{key}.{kind}"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + 32
    payload = memoryview(data)[head:]
    found = None
    if data[:len(MAGIC)] == MAGIC and _check(key, payload) == data[len(MAGIC):head]:
        try:
            found = decode(payload, cancel)
        except LayoutCancelled:
            raise
        except Exception:  # a damaged entry is only a miss
            found = None
    if found is None:
        _unlink(path)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # most recently used
    return found


def store(key: str, kind: str, encode: Callable[[T], bytes | None], value: T) -> None:
    """Keep ``value`` under ``key`` (quietly nothing if it or the disk says no)."""
    try:
        payload = encode(value)
    except (RecursionError, ValueError, TypeError, pickle.PicklingError):
        return
    if payload is None:
        return
    if _write(cache_dir() / f"{key}.{kind}", MAGIC + _check(key, payload) + payload):
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


def _check(key: str, payload: bytes | memoryview) -> bytes:
    digest = hashlib.sha256(key.encode())
    digest.update(payload)  # releases the GIL
    return digest.digest()


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
