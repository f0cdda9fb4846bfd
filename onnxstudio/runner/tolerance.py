"""Default tolerances that follow the dtype: float16 keeps ~3 significant digits, so a
float32 tolerance flags one-ulp rounding as a difference. Every verdict names the tolerance
it used."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from onnxstudio.errors import InputError

# Relative tolerance per dtype: about two units in the last place for low precision.
RELATIVE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-3, "float64": 1e-3}
# np.allclose pairs (rtol, atol) for exact checks (the cut check): tighter for float32.
CLOSE = {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1e-4, 1e-5),
         "float64": (1e-7, 1e-9)}
# (rtol, atol) a test set's expected outputs are held to: onnx's backend test runner's
# (rtol 1e-3, atol 1e-7; two ulps for bfloat16), so a verdict agrees with onnx's suites.
EXPECTED = (1e-3, 1e-7)
EXPECTED_BY_DTYPE = {"bfloat16": (2.0**-6, 1e-7)}
WHY = {"float16": "float16 keeps ~3 significant digits", "bfloat16": "bfloat16 keeps ~2",
       "float32": "float32", "float64": "float64"}


def _name(dtype: object) -> str:
    text = str(dtype)
    if text in RELATIVE:
        return text
    try:
        return str(np.dtype(text))
    except TypeError:
        return text


def coarsest(*dtypes: object) -> str:
    """The lower-precision float dtype of the values compared ("float32" if none is float)."""
    names = [n for n in (_name(d) for d in dtypes) if n in RELATIVE]
    return max(names, key=lambda n: RELATIVE[n], default="float32")


def relative_for(dtype: object, user: float | None = None) -> float:
    """The user's tolerance when given, else the dtype's default."""
    return float(user) if user is not None else RELATIVE[coarsest(dtype)]


def close_for(dtype: object) -> tuple[float, float]:
    return CLOSE[coarsest(dtype)]


def expected_for(dtype: object) -> tuple[float, float]:
    """(rtol, atol) for comparing an output with a test set's expected value."""
    return EXPECTED_BY_DTYPE.get(_name(dtype), EXPECTED)


def format_tolerance(value: float) -> str:
    """1e-3 rather than 0.001: tolerances are read as orders of magnitude."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    mantissa, exponent = f"{value:.3e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    power = int(exponent)
    return f"{mantissa}e{power}" if abs(power) >= 3 else f"{value:g}"


def describe(dtypes: Iterable[str], user: float | None = None) -> str:
    """One line naming the tolerance(s) used, e.g. "2e-3 for float16 (… ~3 significant …)"."""
    if user is not None:
        return f"tolerance {format_tolerance(user)} (yours, for every dtype)"
    seen = sorted({coarsest(d) for d in dtypes} or {"float32"}, key=lambda n: RELATIVE[n])
    low = ("float16", "bfloat16")
    parts = [f"{format_tolerance(RELATIVE[n])} for {n}" + (f" ({WHY[n]})" if n in low else "")
             for n in seen]
    return "tolerance " + ", ".join(parts) + " — the default for the dtype"


def parse_tolerance(text: str) -> float:
    """A finite number ≥ 0 (``1e-3``, ``0.0005``); InputError naming the problem otherwise.

    Shared by the CLI and the Compare panel: a negative tolerance would call identical
    values divergent, NaN would call nothing divergent.
    """
    try:
        value = float(text.strip())
    except ValueError:
        raise InputError(f"Tolerance: {text.strip()!r} is not a number "
                         f"(examples: 1e-3, 5e-5, 0.01)") from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"Tolerance: {text.strip()!r} must be a finite number ≥ 0")
    return value


def tolerance_choice(text: str) -> float | None:
    """``auto``: follow each value's dtype (None); otherwise a tolerance as parse_tolerance."""
    return None if text.strip().lower() == "auto" else parse_tolerance(text)
