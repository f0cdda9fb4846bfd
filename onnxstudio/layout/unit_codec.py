"""Units' layout inputs and results as flat bytes, for the worker processes of
``concurrency/unit_pool.py`` (``batch.py`` sends a batch of units, ``pool_worker.py``
lays them out).

Each field of every unit goes into one typed array (float64 sizes and coordinates,
int64 indices, NaN for a port offset that is None), so packing and unpacking is a few
C calls per batch, not a pickle of a list of tuples per unit. Values round-trip exactly
(float64 in, float64 out): a unit's result from a worker is the one this process makes.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Sequence
from itertools import chain
from math import nan

import numpy as np

from onnxstudio.layout.layered import DagResult
from onnxstudio.layout.unit_place import DagInputs

_COUNT = struct.Struct("<I")
_PART = struct.Struct("<cQ")  # an array's typecode and length


def _pack(parts: Sequence[array]) -> bytes:  # type: ignore[type-arg]
    """The arrays after a header padded to 8 bytes: float64 and int64 arrays packed
    before any of bytes stay aligned for numpy's ``frombuffer``."""
    head = _COUNT.pack(len(parts)) + b"".join(
        _PART.pack(p.typecode.encode(), len(p)) for p in parts)
    return b"".join([head, bytes(-len(head) % 8), *(memoryview(p).cast("B") for p in parts)])


def _parts(data: bytes) -> list[tuple[str, int, int]]:
    """(typecode, length, byte offset) of each packed array."""
    (count,) = _COUNT.unpack_from(data)
    at = _COUNT.size + count * _PART.size
    at += -at % 8
    out = []
    for i in range(count):
        code, n = _PART.unpack_from(data, _COUNT.size + i * _PART.size)
        tc = code.decode()
        out.append((tc, n, at))
        at += n * array(tc).itemsize
    return out


def _unpack(data: bytes, parts: list[tuple[str, int, int]] | None = None
            ) -> list[list]:  # type: ignore[type-arg]
    """Each packed array (or each of ``parts``) as a list."""
    out = []
    for tc, n, at in _parts(data) if parts is None else parts:
        part = array(tc)
        part.frombytes(data[at:at + n * part.itemsize])
        out.append(part.tolist())
    return out


def _offsets(values: list[float]) -> list[float | None]:
    return [None if v != v else v for v in values]  # NaN stands for None


def pack_inputs(units: Sequence[DagInputs]) -> bytes:
    counts = array("q", chain.from_iterable(
        (len(a.widths), len(a.edges), len(a.top), len(a.bottom)) for a in units))
    return _pack([
        counts,
        array("d", chain.from_iterable(a.widths for a in units)),
        array("d", chain.from_iterable(a.heights for a in units)),
        array("q", chain.from_iterable(chain.from_iterable(a.edges for a in units))),
        array("d", chain.from_iterable(a.weights for a in units)),
        array("q", chain.from_iterable(a.top for a in units)),
        array("q", chain.from_iterable(a.bottom for a in units)),
        array("d", [nan if v is None else v for a in units for v in a.src_off]),
        array("d", [nan if v is None else v for a in units for v in a.dst_off]),
    ])


def unpack_inputs(data: bytes) -> list[DagInputs]:
    counts, widths, heights, ends, weights, top, bottom, src, dst = _unpack(data)
    src_off = _offsets(src)
    dst_off = _offsets(dst)
    edges = list(zip(ends[0::2], ends[1::2], strict=True))
    out = []
    v = e = t = b = 0
    for i in range(0, len(counts), 4):
        n, m, nt, nb = counts[i:i + 4]
        out.append(DagInputs(widths[v:v + n], heights[v:v + n], edges[e:e + m],
                             weights[e:e + m], top[t:t + nt], bottom[b:b + nb],
                             src_off[e:e + m], dst_off[e:e + m]))
        v, e, t, b = v + n, e + m, t + nt, b + nb
    return out


def pack_results(results: Sequence[DagResult]) -> bytes:
    counts = array("q", chain.from_iterable(
        (len(r.x), len(r.ends), len(r.points)) for r in results))
    points = np.concatenate([r.points.ravel() for r in results]) if results else np.empty(0)
    ends = np.concatenate([r.ends for r in results]) if results else np.empty(0)
    return _pack([
        counts,
        array("d", chain.from_iterable((r.width, r.height) for r in results)),
        array("d", chain.from_iterable(r.x for r in results)),
        array("d", chain.from_iterable(r.y for r in results)),
        array("q", chain.from_iterable(r.rank for r in results)),
        array("d", points.astype(np.float64).tobytes()),
        array("q", ends.astype(np.int64).tobytes()),
        array("b", chain.from_iterable(r.reversed for r in results)),  # last: bytes
    ])


def unpack_results(data: bytes) -> list[DagResult]:
    """The results, their routes left in the reply's bytes (read-only views, as the
    memo's results are to be treated)."""
    parts = _parts(data)
    counts, sizes, xs, ys, ranks, rev = _unpack(data, [*parts[:5], parts[7]])
    (_, npoints, at_points), (_, nends, at_ends) = parts[5:7]
    points = np.frombuffer(data, np.float64, npoints, at_points).reshape(-1, 2)
    ends = np.frombuffer(data, np.int64, nends, at_ends)
    flags = [v != 0 for v in rev]
    out = []
    v = e = p = 0
    for i in range(0, len(counts), 3):
        n, m, k = counts[i:i + 3]
        out.append(DagResult.packed(xs[v:v + n], ys[v:v + n], sizes[2 * (i // 3)],
                                    sizes[2 * (i // 3) + 1], points[p:p + k],
                                    ends[e:e + m], flags[e:e + m], ranks[v:v + n]))
        v, e, p = v + n, e + m, p + k
    return out

