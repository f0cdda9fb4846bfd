"""Random or zero inputs for any model: sizes for symbolic dimensions that the model accepts
(a sequence of 512 samples for audio, a few tokens for text, 224 for image sides) and values
that follow the input's name where a name says what it is (masks, sample rates, beam counts).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from math import prod

import numpy as np

from onnxstudio.errors import InputError
from onnxstudio.model.formatting import human_bytes
from onnxstudio.runner.inputs import Dim, TensorSpec

AUDIO_SAMPLES = 512  # silero & co. want 256/512-sample windows; 1 breaks reflect padding
TEXT_TOKENS = 8
IMAGE_SIDE = 224
# Random inputs larger than this are refused before numpy is asked for them.
BUDGET = 1 << 30
DIMS_SYNTAX = "NAME=SIZE, NAME=SIZE (e.g. batch=1, sequence=512)"
_SEQUENCE_WORDS = ("seq", "len", "time", "sample", "frame", "token", "step", "audio", "wav")
# Inputs whose name fixes their value: (pattern, value); scalars or [1]-shaped.
_NAMED_VALUES: list[tuple[str, float]] = [
    (r"^(sr|sample_?rate|sampling_?rate)$", 16000), (r"num_beams", 2),
    (r"num_return_sequences", 1), (r"min_length", 1), (r"(length|repetition)_penalty", 1.0),
    (r"temperature", 1.0), (r"top_p", 0.9), (r"top_k", 5),
]


def dim_key(spec: TensorSpec, axis: int, d: Dim) -> str | None:
    """The name a symbolic dimension is set by (unnamed ones as "input:axis"), None if fixed."""
    if isinstance(d, int) and d > 0:
        return None
    return d if isinstance(d, str) and d else f"{spec.name}:{axis}"


def _is_image_hw(spec: TensorSpec, axis: int) -> bool:
    s = spec.shape
    return len(s) == 4 and ((s[1] in (1, 3) and axis in (2, 3)) or (s[3] in (1, 3)
                                                                   and axis in (1, 2)))


def _size_for(spec: TensorSpec, axis: int, key: str) -> int:
    """A size the model will accept for one symbolic dimension, from where it appears."""
    name = key.lower()
    seq_named = any(w in name for w in _SEQUENCE_WORDS)
    if _is_image_hw(spec, axis):
        return IMAGE_SIDE
    if ("batch" in name and not seq_named) or (axis == 0 and len(spec.shape) >= 2):
        return 1
    cache = f"{name} {spec.name.lower()}"
    if ("past" in cache or "cache" in cache) and axis < len(spec.shape) - 1:
        return 0  # an empty cache: the first step of generation, as a prompt runs
    integer = bool(spec.dtype) and spec.dtype.startswith(("int", "uint"))  # type: ignore[union-attr]
    last = axis == len(spec.shape) - 1
    if integer and (seq_named or last):
        return TEXT_TOKENS
    if spec.dtype and spec.dtype.startswith("float") and (seq_named or last):
        return AUDIO_SAMPLES
    return 1


def default_dim_sizes(specs: Sequence[TensorSpec],
                      hints: Mapping[str, int] | None = None) -> dict[str, int]:
    """Sensible sizes for every symbolic dimension (see module docstring); ``hints``:
    sizes the model's folder or weights tell (an LLM cache's head size)."""
    sizes: dict[str, int] = {}
    for spec in specs:
        for axis, d in enumerate(spec.shape):
            key = dim_key(spec, axis, d)
            if key is not None and key not in sizes and "+" not in key:
                sizes[key] = _size_for(spec, axis, key)
    sizes.update({k: v for k, v in (hints or {}).items() if k in sizes})
    return _follow_totals(sizes, set())


def _follow_totals(sizes: dict[str, int], given: set[str]) -> dict[str, int]:
    """A total length (``total_sequence_length``) is the past plus the new tokens, unless
    set: an LLM refuses a mask that disagrees with its cache and its input ids."""
    totals = [k for k in sizes if "total" in k.lower() and k not in given]
    past = [k for k in sizes if "past" in k.lower() and "total" not in k.lower()
            and ("seq" in k.lower() or "len" in k.lower())]
    new = [k for k in sizes if any(w in k.lower() for w in ("seq", "len", "token"))
           and "past" not in k.lower() and "total" not in k.lower()]
    if totals and new:
        for key in totals:
            sizes[key] = sizes[new[0]] + (sizes[past[0]] if past else 0)
    return sizes


def concrete_shape(spec: TensorSpec, sizes: Mapping[str, int]) -> tuple[int, ...]:
    out: list[int] = []
    for axis, d in enumerate(spec.shape):
        key = dim_key(spec, axis, d)
        if key is None:
            out.append(int(d))  # type: ignore[arg-type]
        elif "+" in key and all(p.strip() in sizes for p in key.split("+")):
            out.append(sum(int(sizes[p.strip()]) for p in key.split("+")))
        elif key in sizes:
            out.append(int(sizes[key]))
        else:
            raise InputError(f"{spec.name}: no size given for symbolic dimension {key!r}")
    return tuple(out)


def parse_dim_sizes(text: str) -> dict[str, int]:
    """``batch=1, sequence=512`` (commas, semicolons or spaces between) -> sizes."""
    sizes: dict[str, int] = {}
    for part in re.split(r"[,;\s]+", text.strip()):
        if not part:
            continue
        name, eq, value = part.partition("=")
        if not eq or not name or not value.isdigit():
            raise InputError(f"dims: expected {DIMS_SYNTAX}; got {part!r}")
        sizes[name] = int(value)
    return sizes


def format_dim_sizes(sizes: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def dims_note(specs: Sequence[TensorSpec], sizes: Mapping[str, int] | None = None,
              hints: Mapping[str, int] | None = None) -> str:
    """What a failed random run adds: the sizes it used and how to set others."""
    used = default_dim_sizes(specs, hints)
    used.update(sizes or {})
    used = _follow_totals(used, set(sizes or {}))
    if not used:
        return ""
    return (f"random inputs used {format_dim_sizes(used)}; set a symbolic dimension "
            "with --dim NAME=SIZE")


def _named_value(spec: TensorSpec, sizes: Mapping[str, int]) -> float | None:
    name = spec.name.lower()
    if re.search(r"max_length", name):
        longest = max((v for k, v in sizes.items() if "batch" not in k.lower()), default=0)
        return longest + TEXT_TOKENS
    return next((v for pat, v in _NAMED_VALUES if re.search(pat, name)), None)


def synthetic_input(spec: TensorSpec, sizes: Mapping[str, int], rng: np.random.Generator,
                    zeros: bool = False) -> np.ndarray:
    """Data of the input's dtype: named values, masks of ones, zero states; otherwise floats
    ~ U[0, 1), integers in [0, 10), strings "a" (all zeros with ``zeros``)."""
    if not spec.is_tensor:
        raise InputError(f"{spec.name}: random data only for tensor inputs (this is a {spec.type})")
    shape = concrete_shape(spec, sizes)
    dtype = np.dtype(spec.dtype)
    name = spec.name.lower()
    fixed = _named_value(spec, sizes)
    if dtype.kind == "O":
        return np.full(shape, "a", dtype=object)
    if fixed is not None:
        return np.full(shape, fixed, dtype=dtype)
    if "mask" in name:
        return np.ones(shape, dtype=dtype)
    if "position_ids" in name and shape:
        return np.broadcast_to(np.arange(shape[-1]), shape).astype(dtype)
    if zeros or "token_type" in name or re.search(r"state|^h0$|^c0$|past|cache", name):
        return np.zeros(shape, dtype=dtype)
    if dtype.kind == "f":
        return rng.random(shape).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 10, size=shape).astype(dtype)
    return rng.random(shape) < 0.5


def synthetic_feeds(specs: Sequence[TensorSpec], sizes: Mapping[str, int] | None = None,
                    seed: int = 0, zeros: bool = False,
                    hints: Mapping[str, int] | None = None) -> dict[str, np.ndarray]:
    """Feeds for every input; ``sizes`` overrides the default sizes of symbolic dims."""
    merged = default_dim_sizes(specs, hints)
    unknown = sorted(set(sizes or {}) - set(merged))
    if unknown:
        known = ", ".join(merged) or "none"
        raise InputError(f"dims: no symbolic dimension named {', '.join(unknown)} "
                         f"(this model has: {known})")
    merged.update(sizes or {})
    merged = _follow_totals(merged, set(sizes or {}))
    check_budget(specs, merged)
    rng = np.random.default_rng(seed)
    return {s.name: synthetic_input(s, merged, rng, zeros) for s in specs}


def check_budget(specs: Sequence[TensorSpec], sizes: Mapping[str, int],
                 budget: int | None = None) -> None:
    """Refuse, before numpy is asked, feeds needing more than ``budget`` bytes (default
    BUDGET): a declared dimension of 2^40 is not a request for 4 TB."""
    limit = BUDGET if budget is None else budget
    total = 0
    for spec in specs:
        if not spec.is_tensor:
            continue
        shape = concrete_shape(spec, sizes)
        if any(d < 0 for d in shape):
            raise InputError(f"{spec.name}: shape {list(shape)} has a negative dimension")
        itemsize = np.dtype(spec.dtype).itemsize if spec.dtype else 8
        total += prod(shape) * max(itemsize, 1)
        if total > limit:
            raise InputError(f"random inputs need {human_bytes(total)} (input {spec.name!r} is "
                             f"{spec.dtype}{list(shape)}), beyond the {human_bytes(limit)} budget "
                             "for random inputs")

