"""Cancel reaches onnxruntime: profile, capture, compare and run-part stop mid-work with
the one Cancelled error, and the window's task runner stops them the same way."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.errors import Cancelled
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.compare import RunConfig, compare
from onnxstudio.runner.cut_check import run_part
from onnxstudio.runner.intermediates import capture
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile import profile
from onnxstudio.runner.profile_child import profile_isolated
from tests.builders import make_model, save

SIZE, DEPTH = 256, 40  # one run takes a few milliseconds: many runs take seconds


@pytest.fixture(scope="module")
def slow_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A chain of MatMul+Tanh: cheap to build, as slow per run as we ask."""
    rng = np.random.default_rng(0)
    nodes, inits, last = [], [], "x"
    for i in range(DEPTH):
        w = numpy_helper.from_array(
            (rng.standard_normal((SIZE, SIZE)) / SIZE).astype(np.float32), f"w{i}")
        inits.append(w)
        nodes += [helper.make_node("MatMul", [last, f"w{i}"], [f"m{i}"], name=f"mm{i}"),
                  helper.make_node("Tanh", [f"m{i}"], [f"t{i}"], name=f"tanh{i}")]
        last = f"t{i}"
    graph = helper.make_graph(
        nodes, "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [SIZE, SIZE])],
        [helper.make_tensor_value_info(last, TensorProto.FLOAT, [SIZE, SIZE])], inits)
    model = make_model(graph)
    onnx.checker.check_model(model)
    return save(model, tmp_path_factory.mktemp("cancel") / "slow.onnx")


def _cancel_while(job: Callable[[CancelToken], Any]) -> BaseException | None:
    """Run ``job`` on a thread, cancel it once it has started, return what it raised."""
    token = CancelToken()
    started = threading.Event()
    raised: list[BaseException] = []

    def run() -> None:
        started.set()
        try:
            job(token)
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    started.wait()
    threading.Event().wait(0.2)  # let onnxruntime get going
    token.cancel()
    worker.join()
    return raised[0] if raised else None


def test_profile_of_many_runs_stops_with_cancelled(slow_model: Path) -> None:
    raised = _cancel_while(lambda token: profile(
        RunRequest(slow_model, random=True), runs=100_000, cancel=token))
    assert isinstance(raised, Cancelled)


def test_the_windows_profile_in_a_child_process_stops_with_cancelled(slow_model: Path) -> None:
    raised = _cancel_while(lambda token: profile_isolated(
        RunRequest(slow_model, random=True), runs=100_000, cancel=token))
    assert isinstance(raised, Cancelled)


def test_cancelled_token_stops_capture_compare_and_run_part(slow_model: Path) -> None:
    token = CancelToken()
    token.cancel()
    request = RunRequest(slow_model, random=True)
    jobs: list[Callable[[], Any]] = [
        lambda: capture(request, cancel=token),
        lambda: compare(request, RunConfig("ort"), RunConfig("ort", optimization="disable"),
                        cancel=token),
        lambda: run_part(slow_model, slow_model, cancel=token),
    ]
    for job in jobs:
        with pytest.raises(Cancelled):
            job()


def test_uncancelled_token_changes_nothing(slow_model: Path) -> None:
    checks = run_part(slow_model, slow_model, cancel=CancelToken())
    assert checks and all(c.matches for c in checks)


def test_task_runner_cancel_terminates_the_profile(qtbot, slow_model: Path) -> None:
    from onnxstudio.ui.tasks import TaskContext, TaskRunner

    runner = TaskRunner()
    started = threading.Event()

    def work(context: TaskContext) -> object:
        started.set()
        return profile(RunRequest(slow_model, random=True), runs=100_000,
                       cancel=context.token)

    failures: list[str] = []
    runner.failed.connect(failures.append)
    with qtbot.assertNotEmitted(runner.finished):
        runner.start(work)
        assert started.wait(30)
        threading.Event().wait(0.2)
        runner.cancel()
        assert TaskRunner.wait_all(60000)  # 100,000 runs would take minutes
        qtbot.wait(50)
    assert failures == []  # a cancelled task is not a failure
    assert not runner.busy


def test_release_drops_what_the_hooks_keep_alive() -> None:
    """A finished job's token lets go of its hooks (a session's cancel keeps the whole
    onnxruntime session alive) on the job's thread; a later cancel calls none of them."""
    import weakref

    class Session:
        def __init__(self) -> None:
            self.cancelled = False

        def cancel(self) -> None:
            self.cancelled = True

    token = CancelToken()
    session = Session()
    token.watch(session.cancel)
    alive = weakref.ref(session)
    del session
    assert alive() is not None  # the hook holds it
    token.release()
    assert alive() is None
    token.cancel()
    assert token.cancelled
