"""A long-lived onnxruntime session with the app's options, cancellation, timing and benchmark."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from onnxstudio.errors import Cancelled, RunError, with_details
from onnxstudio.model.external import model_folder
from onnxstudio.model.load import check_model_bytes, read_checked
from onnxstudio.readable import Nodes, ort_message
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.inputs import TensorSpec, spec_from_ort

OPTIMIZATION_LEVELS: dict[str, ort.GraphOptimizationLevel] = {
    "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}
CPU = "CPUExecutionProvider"


class RunCancelled(RunError, Cancelled):
    """The run was stopped on request (Cancel, or superseded by a newer request)."""


def available_providers() -> list[str]:
    """Execution providers this onnxruntime build offers, CPU first."""
    found = list(ort.get_available_providers())
    return [CPU, *[p for p in found if p != CPU]]


@dataclass(frozen=True)
class SessionConfig:
    provider: str = CPU
    optimization: str = "all"
    threads: int = 0  # 0: onnxruntime's own choice

    def session_options(self) -> ort.SessionOptions:
        so = ort.SessionOptions()
        if self.optimization not in OPTIMIZATION_LEVELS:
            raise RunError(f"unknown optimisation level {self.optimization!r} "
                           f"(choose from {', '.join(OPTIMIZATION_LEVELS)})")
        so.graph_optimization_level = OPTIMIZATION_LEVELS[self.optimization]
        if self.threads > 0:
            so.intra_op_num_threads = self.threads
        so.log_severity_level = 4  # our messages (RunError), not onnxruntime's on stderr
        return so


@dataclass
class RunResult:
    outputs: dict[str, Any]
    latency_ms: float


@dataclass
class BenchmarkResult:
    times_ms: list[float]

    @property
    def median_ms(self) -> float:
        return float(np.median(self.times_ms))

    @property
    def p90_ms(self) -> float:
        return float(np.percentile(self.times_ms, 90))


def _failure(what: str, exc: BaseException, nodes: Nodes | None,
             feeds: Mapping[str, Any] | None = None) -> RunError:
    """One readable line (operator and node named, no C++ signature), the whole
    onnxruntime text kept behind it for Details."""
    dtypes: dict[int, str] = {int(v.dtype.num): f"input '{k}' ({v.dtype})"
                              for k, v in (feeds or {}).items() if isinstance(v, np.ndarray)}
    line = ort_message(str(exc), nodes, dtypes)[:600]
    return RunError(with_details(f"{what}: {line}", str(exc).strip()))


def file_nodes(path: Path) -> list[tuple[str, str]]:
    """(op_type, name) of the nodes of the model file, for naming an unnamed failing node:
    read again only when onnxruntime reports one."""
    return [(n.op_type, n.name) for n in read_checked(path).proto.graph.node]


class Session:
    """One InferenceSession per model and configuration; thread-safe cancel from any thread."""

    def __init__(self, path: str | Path, config: SessionConfig | None = None, *,
                 model_bytes: bytes | None = None,
                 tweak: Callable[[ort.SessionOptions], None] | None = None,
                 cancel: CancelToken | None = None, nodes: Nodes | None = None) -> None:
        """``model_bytes``: run this in-memory copy of ``path`` (e.g. with extra outputs);
        ``tweak``: adjust the options before creation (e.g. turn profiling on);
        ``cancel``: a job's token; cancelling it stops this session's runs for good;
        ``nodes``: the model's (op_type, name) list, asked for only when a failure names
        an unnamed node (default: the file read again).

        onnxruntime never reads the user's file itself: it gets bytes whose external data
        references the loader has checked (onnxruntime's own checks are a second wall).
        """
        self.path = Path(path)
        self.config = config or SessionConfig()
        self._nodes: Nodes = nodes or (lambda: file_nodes(self.path))
        if self.config.provider not in ort.get_available_providers():
            raise RunError(f"{self.path.name}: execution provider {self.config.provider} is not "
                           f"available (available: {', '.join(available_providers())})")
        providers = [self.config.provider]
        if self.config.provider != CPU:
            providers.append(CPU)
        options = self.config.session_options()
        if model_bytes is None:
            model_bytes = read_checked(self.path).session_bytes()
        else:
            check_model_bytes(self.path, model_bytes)
        # External data resolves where the loader checked it: next to the path as given.
        options.add_session_config_entry(
            "session.model_external_initializers_file_folder_path", str(model_folder(self.path)))
        if tweak is not None:
            tweak(options)
        try:
            self.session = ort.InferenceSession(model_bytes, options, providers=providers)
        except Exception as exc:
            raise _failure(f"{self.path.name}: onnxruntime cannot load this model", exc,
                           self._nodes) from exc
        self.inputs: list[TensorSpec] = [spec_from_ort(a) for a in self.session.get_inputs()]
        self.outputs: list[TensorSpec] = [spec_from_ort(a) for a in self.session.get_outputs()]
        self.metadata: dict[str, str] = dict(self.session.get_modelmeta().custom_metadata_map)
        self._lock = threading.Lock()
        self._current: ort.RunOptions | None = None
        self._cancelled = False
        if cancel is not None:
            cancel.watch(self.cancel)

    def cancel(self) -> None:
        """Stop the run in progress (if any) at the next node boundary."""
        with self._lock:
            self._cancelled = True
            if self._current is not None:
                self._current.terminate = True

    def reset_cancel(self) -> None:
        """Start of a new request: forget an earlier cancel()."""
        with self._lock:
            self._cancelled = False

    def run(self, feeds: Mapping[str, Any]) -> RunResult:
        """Run once; RunCancelled after cancel() (until reset_cancel()), RunError on failure."""
        options = ort.RunOptions()
        options.log_severity_level = 4
        with self._lock:
            if self._cancelled:
                raise RunCancelled(f"{self.path.name}: run cancelled")
            self._current = options
        try:
            started = time.perf_counter()
            values = self.session.run(None, dict(feeds), options)
            latency = (time.perf_counter() - started) * 1000.0
        except Exception as exc:
            if options.terminate:
                raise RunCancelled(f"{self.path.name}: run cancelled") from exc
            raise _failure(f"{self.path.name}: onnxruntime failed while running", exc,
                           self._nodes, feeds) from exc
        finally:
            with self._lock:
                self._current = None
        names = [o.name for o in self.outputs]
        return RunResult(dict(zip(names, values, strict=True)), latency)

    def benchmark(self, feeds: Mapping[str, Any], runs: int = 20, warmup: int = 1,
                  progress: Callable[[int, int], None] | None = None) -> BenchmarkResult:
        """Time `runs` runs after `warmup` untimed ones; cancel() stops it (RunCancelled)."""
        for _ in range(max(0, warmup)):
            self.run(feeds)
        times: list[float] = []
        for i in range(max(1, runs)):
            times.append(self.run(feeds).latency_ms)
            if progress is not None:
                progress(i + 1, runs)
        return BenchmarkResult(times)
