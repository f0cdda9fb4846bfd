"""Check that split stages, chained, compute what the whole model computes.

The whole model runs once on seeded random inputs with every handed-over tensor added as
an output; then each stage runs on what the stages before it really returned (not on the
whole model's values, so an error early in the chain shows up where it lands), and every
stage output is compared with the whole model's value of the same tensor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from onnxstudio.errors import RunError
from onnxstudio.runner.compare import Difference, difference
from onnxstudio.runner.cut_check import cpu_session, full_model_values
from onnxstudio.runner.tolerance import coarsest, relative_for


@dataclass(frozen=True)
class StageResult:
    file: str
    differences: tuple[Difference, ...]

    @property
    def ok(self) -> bool:
        return not any(d.exceeds for d in self.differences)


@dataclass(frozen=True)
class ChainCheck:
    stages: tuple[StageResult, ...]
    tolerance: float

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.stages)

    @property
    def max_abs(self) -> float:
        return max((d.max_abs for s in self.stages for d in s.differences), default=0.0)

    @property
    def worst(self) -> float:
        """The largest difference as a share of what the tolerance allows (≤ 1 passes)."""
        return max((d.ratio for s in self.stages for d in s.differences), default=0.0)

    def describe(self) -> str:
        compared = sum(len(s.differences) for s in self.stages)
        if self.ok:
            return (f"chained stages match the whole model on random inputs: {compared} "
                    f"tensors, max |Δ| {self.max_abs:.3g}, at most {self.worst:.0%} of the "
                    f"tolerance ({self.tolerance:g} × max(1, |value|))")
        bad = next(d for s in self.stages for d in s.differences if d.exceeds)
        where = next(s.file for s in self.stages if not s.ok)
        return (f"chained stages DIFFER from the whole model: {where} output '{bad.name}' "
                f"max |Δ| {bad.max_abs:.3g} (tolerance {self.tolerance:g})")

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "tolerance": self.tolerance, "max_abs": self.max_abs,
                "worst": self.worst,
                "stages": [{"file": s.file, "ok": s.ok,
                            "outputs": [{"name": d.name, "max_abs": d.max_abs,
                                         "ok": not d.exceeds} for d in s.differences]}
                           for s in self.stages]}


def _tolerance(values: Mapping[str, Any]) -> float:
    """The tolerance of the lowest-precision float handed over (fp16 keeps ~3 digits)."""
    return relative_for(coarsest(*(np.asarray(v).dtype for v in values.values())))


def check_chain(model_path: str | Path, folder: str | Path,
                stages: Sequence[Mapping[str, Any]], seed: int = 0,
                dim_sizes: dict[str, int] | None = None) -> ChainCheck:
    """Run the manifest's ``stages`` (``file``, ``inputs``, ``outputs``) one after another,
    one stage's session at a time; ``dim_sizes``: sizes of the random inputs' dims."""
    handed = [o for stage in stages for o in stage["outputs"]]
    whole = full_model_values(model_path, list(dict.fromkeys(handed)), seed=seed,
                              dim_sizes=dim_sizes)
    tolerance = _tolerance(whole)
    values: dict[str, Any] = {}  # what the chain itself computed so far, and the feeds
    results = []
    for stage in stages:
        session = cpu_session(str(Path(folder) / stage["file"]), stage["file"])
        feeds = {}
        for item in stage["inputs"]:
            source = values if item["from"] != "model" else whole
            if item["name"] not in source:
                raise RunError(f"{stage['file']}: input '{item['name']}' is not made by "
                               f"{item['from']}")
            feeds[item["name"]] = source[item["name"]]
        try:
            got = session.run(list(stage["outputs"]), feeds)
        except Exception as exc:  # onnxruntime raises several types of its own
            raise RunError(f"{stage['file']}: the stage failed to run ({exc})") from exc
        values.update(zip(stage["outputs"], got, strict=True))
        results.append(StageResult(stage["file"], tuple(
            difference(name, whole[name], value, tolerance)
            for name, value in zip(stage["outputs"], got, strict=True))))
    return ChainCheck(tuple(results), tolerance)
