"""Test data as onnx's test suites and the model zoo ship it, and the verdict on it.

A test set is a folder of ``input_N.pb`` (and ``output_N.pb``) holding TensorProto,
SequenceProto, OptionalProto or MapProto messages, read as onnx's own backend runner reads
them (the model's declared type says which message, `numpy_helper` converts); a folder of
``test_data_set_N`` folders runs as a table. ``x.pb`` and ``.npz`` archives (names as keys)
feed inputs too, and an archive's keys that name outputs are expected values. Expected
outputs are held to onnx's runner's tolerance (`tolerance.expected_for`), so a verdict
agrees with onnx's and onnxruntime's own test suites.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from onnxstudio.errors import InputError
from onnxstudio.runner.inputs import TensorSpec
from onnxstudio.runner.tolerance import expected_for, format_tolerance

# input_0.pb (onnx, the model zoo) or test_data_0_input.pb (onnxruntime's older sets)
_NUMBERED = re.compile(r"(?:(input|output)_(\d+)|test_data_(\d+)_(input|output))\.pb")
_SET = re.compile(r"test_data_set_(\d+)")
_OPTIONAL_FIELDS = {1: "tensor_value", 2: "sparse_tensor_value", 3: "sequence_value",
                    4: "map_value", 5: "optional_value"}  # OptionalProto.DataType
_MESSAGES = {"sequence": "SequenceProto", "optional": "OptionalProto", "map": "MapProto"}


@dataclass
class TestSet:
    """One set's inputs (model input name -> value) and expected outputs (may be none)."""

    __test__ = False  # not a pytest class

    name: str
    path: Path
    inputs: dict[str, Any]
    expected: dict[str, Any] = field(default_factory=dict)
    partial: bool = False  # a lone .pb or an archive: other inputs get synthetic data


@dataclass
class OutputCheck:
    """One expected output against what the model returned."""

    name: str
    passed: bool
    max_abs: float  # inf when shape, dtype or type differ
    tolerance: str  # "rtol 1e-3, atol 1e-7"
    reason: str = ""  # why it failed, e.g. "12 of 1,000 values beyond the tolerance"

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "verdict": "pass" if self.passed else "fail",
                "max_abs": self.max_abs, "tolerance": self.tolerance,
                "reason": self.reason or None}

    def describe(self) -> str:
        delta = "—" if not np.isfinite(self.max_abs) else f"{self.max_abs:.3g}"
        word = "pass" if self.passed else "FAIL"
        why = f" — {self.reason}" if self.reason else ""
        return f"{word}  {self.name}: max |Δ| {delta} ({self.tolerance}){why}"


@dataclass
class Verdict:
    """A test set's outcome: every expected output checked, or why the set could not run."""

    source: str
    checks: list[OutputCheck] = field(default_factory=list)
    error: str = ""  # the set could not run (one line)

    @property
    def word(self) -> str:
        """"pass", "fail", "error" (could not run) or "none" (no expected outputs)."""
        if self.error:
            return "error"
        if not self.checks:
            return "none"
        return "pass" if all(c.passed for c in self.checks) else "fail"

    def first_failure(self) -> OutputCheck | None:
        return next((c for c in self.checks if not c.passed), None)

    def summary(self) -> str:
        """One line: "pass: 2 outputs match test_data_set_0" or the first failure."""
        if self.error:
            return f"cannot run {self.source}: {self.error}"
        if not self.checks:
            return f"{self.source} has no expected outputs: nothing to check"
        bad = [c for c in self.checks if not c.passed]
        if not bad:
            n = len(self.checks)
            return f"pass: {n} output{'s match' if n != 1 else ' matches'} {self.source}"
        return f"fail: {len(bad)} of {len(self.checks)} outputs differ from {self.source} " \
               f"({bad[0].name}: {bad[0].reason})"

    def as_json(self) -> dict[str, Any]:
        return {"set": self.source, "verdict": None if self.word == "none" else self.word,
                "expected": [c.as_json() for c in self.checks], "error": self.error or None}


# ----------------------------------------------------------------------------- reading
def is_test_set(folder: Path) -> bool:
    """A folder holding input_0.pb or output_0.pb (two stats: a drag over the window asks,
    and a folder of 100k images must not be listed for it)."""
    return any((folder / name).is_file() for name in
               ("input_0.pb", "output_0.pb", "test_data_0_input.pb"))


def test_sets(folder: Path) -> list[Path]:
    """The test_data_set_N folders inside ``folder``, in N order."""
    try:
        found = [p for p in folder.iterdir() if _SET.fullmatch(p.name) and p.is_dir()]
    except OSError:
        return []
    return sorted(found, key=lambda p: int(_SET.fullmatch(p.name).group(1)))  # type: ignore[union-attr]


def holds_test_data(path: Path) -> bool:
    """Whether ``path`` is test data `run` takes: a set, a folder of sets (from
    test_data_set_0 on), a .pb or .npz file."""
    if path.is_dir():
        return is_test_set(path) or (path / "test_data_set_0").is_dir()
    return path.suffix.lower() in (".pb", ".npz")


def read_value(path: Path, spec: TensorSpec | None) -> tuple[str, Any]:
    """(the name stored in the file, its value) of one .pb file, parsed as the message the
    model's type for it calls for (a TensorProto when the type is unknown)."""
    import onnx
    from google.protobuf.message import DecodeError
    from onnx import numpy_helper

    kind = spec.type if spec is not None else "tensor"
    if kind == "other":
        raise InputError(f"{path.name}: {spec.name if spec else 'this value'} has a type "
                         "test data cannot hold here (sparse tensor?)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path.name}: cannot read ({exc.strerror or exc})") from exc
    message = _MESSAGES.get(kind, "TensorProto")
    try:
        if kind == "sequence":
            seq = onnx.SequenceProto.FromString(data)
            return seq.name, numpy_helper.to_list(seq)
        if kind == "optional":
            opt = onnx.OptionalProto.FromString(data)
            field_name = _OPTIONAL_FIELDS.get(opt.elem_type, "")
            if field_name and not opt.HasField(field_name):  # an empty optional of a type
                return opt.name, None
            return opt.name, numpy_helper.to_optional(opt)
        if kind == "map":
            mp = onnx.MapProto.FromString(data)
            return mp.name, numpy_helper.to_dict(mp)
        tensor = onnx.TensorProto.FromString(data)
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            raise InputError(f"{path.name}: the tensor keeps its data in another file, "
                             "which test data may not")
        return tensor.name, numpy_helper.to_array(tensor)
    except DecodeError as exc:
        raise InputError(f"{path.name}: not an onnx {message} ({exc})") from exc
    except (ValueError, TypeError, KeyError) as exc:
        raise InputError(f"{path.name}: cannot convert this {message} to values "
                         f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
                         ) from exc


def _numbered(folder: Path, kind: str) -> list[Path]:
    files = [(int(m.group(2) or m.group(3)), p) for p in folder.iterdir()
             if (m := _NUMBERED.fullmatch(p.name)) and kind in (m.group(1), m.group(4))]
    return [p for _, p in sorted(files)]


def _match(where: str, values: list[tuple[str, Any]], specs: list[TensorSpec], what: str
           ) -> dict[str, Any]:
    """Values to the model's inputs (or outputs): by the stored name when it is one of
    theirs, else by order (value N -> the Nth one no name claimed)."""
    if len(values) > len(specs):
        raise InputError(f"{where}: {len(values)} {what}s given, the model has "
                         f"{len(specs)} ({', '.join(s.name for s in specs) or 'none'})")
    names = {s.name for s in specs}
    out: dict[str, Any] = {}
    unnamed: list[Any] = []
    for stored, value in values:
        if stored in names and stored not in out:
            out[stored] = value
        else:
            unnamed.append(value)
    free = iter(s.name for s in specs if s.name not in out)
    for value in unnamed:
        out[next(free)] = value
    return out


def _spec_list(specs: list[TensorSpec], count: int) -> list[TensorSpec | None]:
    return [specs[i] if i < len(specs) else None for i in range(count)]


def _read_set(folder: Path, inputs: list[TensorSpec], outputs: list[TensorSpec]) -> TestSet:
    """input_N.pb / output_N.pb of one folder. The Nth file is read as the Nth input's type
    (onnx's runner does the same), then matched by stored name or order."""
    ins, outs = _numbered(folder, "input"), _numbered(folder, "output")
    given = [read_value(p, s) for p, s in zip(ins, _spec_list(inputs, len(ins)), strict=True)]
    want = [read_value(p, s) for p, s in zip(outs, _spec_list(outputs, len(outs)), strict=True)]
    feeds = _match(folder.name, given, inputs, "input")
    missing = [s.name for s in inputs if s.name not in feeds]
    if missing:
        raise InputError(f"{folder.name}: no input_N.pb for model input "
                         f"{', '.join(repr(m) for m in missing)}")
    return TestSet(folder.name, folder, feeds, _match(folder.name, want, outputs, "output"))


def _read_npz(path: Path, inputs: list[TensorSpec], outputs: list[TensorSpec]) -> TestSet:
    """An archive's arrays: keys naming inputs feed them, keys naming outputs are expected
    values, ``arr_N`` keys (np.savez without names) feed the inputs in order."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {k: archive[k] for k in archive.files}
    except FileNotFoundError as exc:
        raise InputError(f"{path.name}: file not found") from exc
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(f"{path.name}: not a readable .npz archive ({exc})") from exc
    in_names, out_names = {s.name for s in inputs}, {s.name for s in outputs}
    unknown = [k for k in arrays if k not in in_names | out_names
               and not re.fullmatch(r"arr_\d+", k)]
    if unknown:
        raise InputError(f"{path.name}: {', '.join(repr(k) for k in unknown)} names no input "
                         f"or output of the model (inputs: "
                         f"{', '.join(s.name for s in inputs) or 'none'})")
    feeds = {k: v for k, v in arrays.items() if k in in_names}
    positional = sorted((k for k in arrays if k not in in_names | out_names),
                        key=lambda k: int(k[4:]))
    free = [s.name for s in inputs if s.name not in feeds]
    if len(positional) > len(free):
        raise InputError(f"{path.name}: {len(positional)} unnamed arrays, but only "
                         f"{len(free)} model inputs are left to feed")
    feeds.update({name: arrays[k] for name, k in zip(free, positional, strict=False)})
    expected = {k: v for k, v in arrays.items() if k in out_names and k not in in_names}
    return TestSet(path.name, path, feeds, expected, partial=True)


def load_test_data(path: Path, inputs: list[TensorSpec], outputs: list[TensorSpec]
                   ) -> list[TestSet]:
    """The sets ``path`` holds: a test set folder, a folder of ``test_data_set_N``, one .pb
    file (its stored name, else the only input) or an .npz archive."""
    if path.is_dir():
        if is_test_set(path):
            return [_read_set(path, inputs, outputs)]
        sets = test_sets(path)
        if not sets:
            raise InputError(f"{path.name}: no input_N.pb files and no test_data_set_N "
                             "folders here")
        return [_read_set(p, inputs, outputs) for p in sets]
    if not path.is_file():
        raise InputError(f"{path.name}: file not found")
    if path.suffix.lower() == ".npz":
        return [_read_npz(path, inputs, outputs)]
    if path.suffix.lower() != ".pb":
        raise InputError(f"{path.name}: test data is a .pb file, an .npz archive or a "
                         "folder of input_N.pb files")
    named = {s.name: s for s in inputs}
    stored = _stored_name(path)
    if stored in named:
        spec = named[stored]
    elif len(inputs) == 1:
        spec = inputs[0]
    else:
        held = repr(stored) if stored else "an unnamed value"
        raise InputError(f"{path.name}: holds {held}, which names none of the model's "
                         f"{len(inputs)} inputs ({', '.join(s.name for s in inputs)})")
    _, value = read_value(path, spec)
    target = spec.name
    return [TestSet(path.name, path, {target: value}, partial=True)]


def _stored_name(path: Path) -> str:
    """The name a .pb file's message carries (field 8 of TensorProto, 1 of the others);
    read as a TensorProto, which is what a lone .pb almost always holds."""
    import onnx
    from google.protobuf.message import DecodeError

    try:
        return onnx.TensorProto.FromString(path.read_bytes()).name
    except (DecodeError, OSError):
        return ""


# ----------------------------------------------------------------------------- checking
def _as_text(arr: np.ndarray) -> np.ndarray:
    """Strings compared as text: onnx stores bytes, onnxruntime returns str."""
    return np.vectorize(lambda v: v.decode("utf-8", "replace") if isinstance(v, bytes) else v,
                        otypes=[object])(arr) if arr.size else arr


def _check(expected: Any, actual: Any) -> tuple[float, str, str]:
    """(max |Δ|, tolerance text, reason it fails or "") of one value, recursing into
    sequences and maps as onnx's runner does."""
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return np.inf, "", f"expected a sequence, got {type(actual).__name__}"
        if len(actual) != len(expected):
            return np.inf, "", f"sequence of {len(actual)}, expected {len(expected)}"
        worst: tuple[float, str, str] = (0.0, "", "")
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            got = _check(e, a)
            if got[2]:
                return got[0], got[1], f"item {i}: {got[2]}"
            worst = max(worst, got, key=lambda t: t[0])
        return worst
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            return np.inf, "", "the map's keys differ"
        checks = [_check(np.asarray(expected[k]), np.asarray(actual[k])) for k in expected]
        bad = next((c for c in checks if c[2]), None)
        return bad or max(checks, key=lambda t: t[0], default=(0.0, "", ""))
    if expected is None or actual is None:
        same = expected is None and actual is None
        return (0.0 if same else np.inf), "", "" if same else "one side is an empty optional"
    e, a = np.asarray(expected), np.asarray(actual)
    if e.shape != a.shape:
        return np.inf, "", f"shape {list(a.shape)}, expected {list(e.shape)}"
    if e.dtype == object or a.dtype == object:
        same = bool(np.array_equal(_as_text(e), _as_text(a)))
        return (0.0 if same else np.inf), "exact", "" if same else "the strings differ"
    if e.dtype != a.dtype:
        return np.inf, "", f"dtype {a.dtype}, expected {e.dtype}"
    rtol, atol = expected_for(e.dtype)
    tol = f"rtol {format_tolerance(rtol)}, atol {format_tolerance(atol)}"
    if e.size == 0:
        return 0.0, tol, ""
    if e.dtype.kind not in "fiub":  # bfloat16, float8: compared as float32 (onnx's runner)
        e, a = e.astype(np.float32), a.astype(np.float32)
    ef, af = e.astype(np.float64), a.astype(np.float64)
    close = np.isclose(af, ef, rtol=rtol, atol=atol, equal_nan=True)
    diff = np.abs(af - ef)
    diff = np.where(np.isnan(ef) & np.isnan(af), 0.0, diff)
    max_abs = float(np.nan_to_num(diff, nan=np.inf).max())
    off = int(close.size - np.count_nonzero(close))
    return max_abs, tol, "" if not off else \
        f"{off:,} of {close.size:,} values beyond the tolerance"


def verdict(test: TestSet, outputs: dict[str, Any]) -> Verdict:
    """Each expected output of ``test`` against what the run returned."""
    checks = []
    for name, expected in test.expected.items():
        if name not in outputs:
            checks.append(OutputCheck(name, False, np.inf, "", "the model returned no such "
                                      "output"))
            continue
        max_abs, tol, reason = _check(expected, outputs[name])
        checks.append(OutputCheck(name, not reason, max_abs, tol or "exact", reason))
    return Verdict(test.name, checks)
