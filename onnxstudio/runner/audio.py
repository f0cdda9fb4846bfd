"""Audio inputs: read a .wav (integer or float PCM, any channel count) as mono float32 samples
in [-1, 1], and find the input an audio clip goes to. The stdlib `wave` module reads only
integer PCM, and float WAV is what audio tools write, so the RIFF chunks are read here."""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from onnxstudio.errors import InputError
from onnxstudio.runner.inputs import TensorSpec

_PCM, _FLOAT, _EXTENSIBLE = 1, 3, 0xFFFE
MAX_BYTES = 512 * 1024 * 1024


@dataclass
class Clip:
    samples: np.ndarray  # float32 (n,)
    rate: int
    channels: int  # in the file (mixed down to mono)


def _chunks(data: bytes, name: str) -> dict[bytes, bytes]:
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise InputError(f"{name}: not a WAV file (no RIFF/WAVE header)")
    chunks: dict[bytes, bytes] = {}
    pos = 12
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        chunks.setdefault(cid, data[pos + 8:pos + 8 + size])
        pos += 8 + size + (size & 1)
    return chunks


def _decode(raw: bytes, fmt: int, bits: int, name: str) -> np.ndarray:
    if fmt == _FLOAT and bits in (32, 64):
        return np.frombuffer(raw[: len(raw) - len(raw) % (bits // 8)],
                             dtype=f"<f{bits // 8}").astype(np.float32)
    if fmt != _PCM or bits not in (8, 16, 24, 32):
        raise InputError(f"{name}: unsupported WAV encoding (format {fmt}, {bits} bits); "
                         "use integer or float PCM")
    if bits == 8:
        return (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) / 128.0
    if bits == 24:
        b = np.frombuffer(raw[: len(raw) - len(raw) % 3], np.uint8).reshape(-1, 3)
        v = (b[:, 0].astype(np.int32) | (b[:, 1].astype(np.int32) << 8)
             | (b[:, 2].astype(np.int32) << 16))
        v = np.where(v >= 1 << 23, v - (1 << 24), v)
        return v.astype(np.float32) / float(1 << 23)
    width = bits // 8
    ints = np.frombuffer(raw[: len(raw) - len(raw) % width], dtype=f"<i{width}")
    return ints.astype(np.float32) / float(1 << (bits - 1))


def read_wav(path: str | Path) -> Clip:
    """Mono float32 samples of a .wav file (channels averaged)."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_BYTES:
            raise InputError(f"{p.name}: WAV file larger than {MAX_BYTES >> 20} MB")
        data = p.read_bytes()
    except FileNotFoundError as exc:
        raise InputError(f"{p.name}: file not found") from exc
    except OSError as exc:
        raise InputError(f"{p.name}: cannot read ({exc.strerror or exc})") from exc
    chunks = _chunks(data, p.name)
    if b"fmt " not in chunks or b"data" not in chunks or len(chunks[b"fmt "]) < 16:
        raise InputError(f"{p.name}: WAV file without a fmt or data chunk")
    fmt, channels, rate, _, _, bits = struct.unpack("<HHIIHH", chunks[b"fmt "][:16])
    if fmt == _EXTENSIBLE and len(chunks[b"fmt "]) >= 26:
        fmt = struct.unpack("<H", chunks[b"fmt "][24:26])[0]
    if channels < 1 or rate < 1:
        raise InputError(f"{p.name}: WAV header has {channels} channels at {rate} Hz")
    flat = _decode(chunks[b"data"], fmt, bits, p.name)
    frames = flat[: len(flat) - len(flat) % channels].reshape(-1, channels)
    return Clip(frames.mean(axis=1).astype(np.float32), int(rate), int(channels))


def audio_input(inputs: list[TensorSpec]) -> TensorSpec | None:
    """The input a clip goes to: a float tensor of rank 1-3 whose last axis is the samples
    (symbolic, or long) and whose other axes are 1 or symbolic."""
    for spec in inputs:
        if not spec.is_tensor or not (spec.dtype or "").startswith("float"):
            continue
        if not 1 <= len(spec.shape) <= 3:
            continue
        last = spec.shape[-1]
        long_or_free = not isinstance(last, int) or last <= 0 or last >= 256
        others = all(not isinstance(d, int) or d in (1, -1, 0) for d in spec.shape[:-1])
        if long_or_free and others:
            return spec
    return None


def shaped(clip: Clip, spec: TensorSpec) -> np.ndarray:
    """The samples in the input's rank ([n], [1, n], [1, 1, n]) and dtype; a fixed length
    is padded with zeros or cut."""
    x = clip.samples
    last = spec.shape[-1]
    if isinstance(last, int) and last > 0:
        x = np.pad(x[:last], (0, max(0, last - len(x))))
    return x.reshape((1,) * (len(spec.shape) - 1) + (len(x),)).astype(np.dtype(spec.dtype))


def recurrent_pairs(inputs: list[str], outputs: list[str]) -> dict[str, str]:
    """Input -> the output that carries it to the next call (state -> stateN, h0 -> hn)."""
    pairs: dict[str, str] = {}
    for i in inputs:
        stem = i.lower().rstrip("0")
        for o in outputs:
            if o != i and o.lower().startswith(stem) and len(o) - len(stem) <= 3:
                pairs[i] = o
    return pairs


def run_in_windows(run: Callable[[dict[str, Any]], tuple[dict[str, Any], float]],
                   feeds: dict[str, Any], name: str, window: int
                   ) -> tuple[dict[str, np.ndarray], float, int, int]:
    """Feed ``feeds[name]`` window by window (a streaming model: silero and the like take
    one short window per call), carrying recurrent state from each call's outputs to the
    next; the other outputs are stacked along a new first axis, one entry per window.
    The last partial window is padded with zeros, not dropped: (outputs, ms, windows,
    zeros padded)."""
    clip = feeds[name]
    count = -(-clip.shape[-1] // window)
    padding = count * window - clip.shape[-1]
    if padding:
        clip = np.pad(clip, [(0, 0)] * (clip.ndim - 1) + [(0, padding)])
    carried: dict[str, str] = {}
    stacked: dict[str, list[np.ndarray]] = {}
    total_ms = 0.0
    feeds = dict(feeds)
    for k in range(count):
        feeds[name] = np.ascontiguousarray(clip[..., k * window:(k + 1) * window])
        outputs, ms = run(feeds)
        total_ms += ms
        if k == 0:
            carried = recurrent_pairs(list(feeds), list(outputs))
        for i, o in carried.items():
            feeds[i] = outputs[o]
        for o, v in outputs.items():
            if o not in carried.values():
                stacked.setdefault(o, []).append(np.asarray(v))
    return {o: np.stack(vs) for o, vs in stacked.items()}, total_ms, count, padding
