"""What a comparison is asked to do: the two configurations, their labels and choices.
Qt-free; the panel builds its controls from it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from onnxstudio.runner.compare import RunConfig
from onnxstudio.runner.session import CPU, available_providers

DEFAULT_TOLERANCE = "auto"  # by dtype: 1e-3 for float32, 2e-3 for float16
DEFAULT_A = "ort:cpu:all"
DEFAULT_B = "ort:cpu:disabled"
_PROVIDER_NAMES = {CPU: "CPU", "CUDAExecutionProvider": "CUDA",
                   "TensorrtExecutionProvider": "TensorRT", "DmlExecutionProvider": "DirectML",
                   "CoreMLExecutionProvider": "CoreML", "OpenVINOExecutionProvider": "OpenVINO",
                   "ROCMExecutionProvider": "ROCm"}


_LEVEL_NAMES = {"all": "all optimisations", "disable": "no optimisations"}


@dataclass(frozen=True)
class CompareOptions:
    """What the user asked to compare; the window turns it into a `compare()` call."""

    a: RunConfig
    b: RunConfig
    tolerance: float | None  # None: the default for each value's dtype
    model_b: Path | None = None  # side B runs this copy of the model; None: the same model


def config_text(config: RunConfig) -> str:
    """A human label: "onnxruntime CPU · all optimisations", "onnx reference evaluator"."""
    if config.engine == "reference":
        return "onnx reference evaluator"
    provider = _PROVIDER_NAMES.get(config.provider,
                                   config.provider.removesuffix("ExecutionProvider"))
    level = _LEVEL_NAMES.get(config.optimization, f"{config.optimization} optimisations")
    return f"onnxruntime {provider} · {level}"


def config_choices() -> list[RunConfig]:
    """Each available provider with and without optimisations, then the reference evaluator."""
    found = [RunConfig("ort", p, level) for p in available_providers()
             for level in ("all", "disable")]
    return [*found, RunConfig("reference")]
