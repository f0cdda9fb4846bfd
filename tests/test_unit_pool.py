"""The worker pool (concurrency/unit_pool.py): the new units of an expanded graph laid out
in spawned worker processes give the very layout this process makes, and every way
the pool can fail (not started, refused, a worker killed, a cancelled layout) still
gives that layout."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from onnxstudio.concurrency import unit_pool
from onnxstudio.layout import ExpandState, batch, build_layout, layered, unit_codec
from onnxstudio.layout.layered import LayoutCancelled
from onnxstudio.layout.types import Layout
from onnxstudio.layout.unit_place import DagInputs
from onnxstudio.model import load_model
from onnxstudio.model.graph import Model
from tests.builders import save
from tests.conftest import LADDER, REPO


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dag30k from ../shared/ladder (376 new units at one depth), else a generated DAG;
    batches of 64 units (``small_batches``) so that either makes several."""
    shared = LADDER / "dag30k.onnx"
    if shared.exists():
        return shared
    from tests.benchmarks.ladder import dag

    return save(dag(8_000), tmp_path_factory.mktemp("dag") / "dag8k.onnx")


@pytest.fixture(scope="module")
def expanded(big: Path) -> Model:
    return load_model(big, shape_inference=False)


@pytest.fixture(autouse=True)
def no_pool_before() -> None:
    """Each test starts without a pool (another module's big model may have started one)."""
    unit_pool.shutdown()


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "BATCH_MAX", 64)


@pytest.fixture
def pool() -> Iterator[unit_pool.Pool]:
    started = unit_pool.warm()
    if started is None:
        pytest.skip(f"no worker pool here: {unit_pool.refusal()}")
    yield started
    unit_pool.shutdown()


def _digest(layout: Layout) -> str:
    """Every box's rectangle and every edge's route, exactly (not rounded)."""
    h = hashlib.sha256()
    for b in layout.boxes:
        h.update(repr((b.id, b.x, b.y, b.width, b.height)).encode())
    for f in layout.groups:
        h.update(repr((f.id, f.x, f.y, f.width, f.height)).encode())
    for e in layout.edges:
        h.update(repr((e.source, e.target, e.back)).encode())
        h.update(e.packed)
    return h.hexdigest()


def _layout(model: Model) -> Layout:
    """The expanded layout, every unit laid out anew (nothing from the memo)."""
    layered._CACHE.clear()
    state = ExpandState()
    state.expand_all(model.graph, bodies=True)
    return build_layout(model, state)


def _here(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the batches this process lays out itself (none when the pool does)."""
    sizes: list[int] = []
    real = batch.batched

    def counted(inputs: list[DagInputs], cancel: Any) -> Any:
        sizes.append(len(inputs))
        return real(inputs, cancel)

    monkeypatch.setattr(batch, "batched", counted)
    return sizes


def test_the_pool_lays_out_what_this_process_would(
        expanded: Model, small_batches: None, monkeypatch: pytest.MonkeyPatch) -> None:
    alone = _digest(_layout(expanded))
    assert unit_pool.started() is None
    with monkeypatch.context() as patch:
        patch.setenv("ONNXSTUDIO_NO_FORK", "1")  # as on a machine without the pool
        assert unit_pool.warm() is None
    started = unit_pool.warm()
    if started is None:
        pytest.skip(f"no worker pool here: {unit_pool.refusal()}")
    try:
        here = _here(monkeypatch)
        assert _digest(_layout(expanded)) == alone
        # the depth of many units went to the workers: this process laid out at most
        # the depth of one batch
        assert all(size <= batch.BATCH_MAX for size in here) and len(here) <= 1
    finally:
        unit_pool.shutdown()


def test_a_killed_worker_leaves_its_batches_to_this_process(
        expanded: Model, small_batches: None, pool: unit_pool.Pool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    alone = _digest(_layout(expanded))
    layered._CACHE.clear()
    victim = pool.workers[0].process
    real = pool._wait

    def wait_killing(cancel: Any) -> Any:  # the worker dies while it works on a batch
        if victim.poll() is None:
            victim.kill()
        return real(cancel)

    monkeypatch.setattr(pool, "_wait", wait_killing)
    here = _here(monkeypatch)
    assert _digest(_layout(expanded)) == alone
    assert here  # its batch was laid out here
    assert victim.pid not in pool.pids


def _units(count: int) -> list[DagInputs]:
    """Distinct units with ports, fixed offsets (some None) and int widths."""
    out = []
    for k in range(count):
        n = 6 + k % 5
        edges = [(i, i + 1) for i in range(n - 1)] + [(0, n - 1), (n, 0), (n - 1, n + 1)]
        widths: list[float] = [40 + k + i for i in range(n)] + [0.0, 0.0]
        out.append(DagInputs(widths, [30.0] * (n + 2), edges, [1.0] * len(edges), [n],
                             [n + 1], [None, 3.5 + k, *[None] * (len(edges) - 2)],
                             [*[None] * (len(edges) - 1), 0.25 * k]))
    return out


def test_units_and_results_cross_the_process_boundary_unchanged() -> None:
    units = _units(20)
    assert unit_codec.unpack_inputs(unit_codec.pack_inputs(units)) == units
    results = batch.batched(units, None)
    back = unit_codec.unpack_results(unit_codec.pack_results(results))
    assert back == results
    assert [r.reversed for r in back] == [r.reversed for r in results]
    assert all(type(v) is bool for r in back for v in r.reversed)


def test_a_cancelled_layout_stops_and_the_pool_serves_the_next(
        pool: unit_pool.Pool, small_batches: None) -> None:
    units = _units(2 * batch.BATCH_MIN + 40)
    size = batch.BATCH_MAX
    jobs = [unit_codec.pack_inputs(units[i:i + size]) for i in range(0, len(units), size)]
    calls = [0]

    def cancel() -> bool:
        calls[0] += 1
        return calls[0] > 1

    with pytest.raises(unit_pool.Cancelled):
        list(pool.run(jobs, cancel))
    replies = dict(pool.run(jobs))
    assert sorted(replies) == list(range(len(jobs)))
    for i, reply in replies.items():
        assert reply is not None
        assert unit_codec.unpack_results(reply) == \
            batch.batched(units[i * size:(i + 1) * size], None)
    layered._CACHE.clear()
    with pytest.raises(LayoutCancelled):  # as a cancelled Expand All sees it
        batch.layout_dags(units, lambda: True)


WORKERS = ("import sys; from onnxstudio.concurrency import unit_pool; "
           "pool = unit_pool.warm(); print(*pool.pids, flush=True); sys.stdin.read()")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_the_workers_end_with_the_app_killed() -> None:
    """SIGKILL leaves no cleanup to run: each worker sees its lifeline close and exits."""
    app = subprocess.Popen([sys.executable, "-c", WORKERS], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True, cwd=REPO,
                           env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert app.stdout is not None
    pids = [int(p) for p in app.stdout.readline().split()]
    assert len(pids) == unit_pool.size() >= 2
    os.kill(app.pid, signal.SIGKILL)
    app.wait()
    assert app.stdin is not None
    app.stdin.close()
    app.stdout.close()
    deadline = time.monotonic() + 60
    while any(Path(f"/proc/{p}").exists() and "Z" not in _state(p) for p in pids):
        assert time.monotonic() < deadline, "a worker outlived the app"
        time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "X"


def test_an_expand_all_export_of_a_big_model_uses_the_pool_with_the_same_bytes(
        big: Path, small_batches: None, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """``onnxstudio export --expand-all`` starts the pool for a model of many operators
    (here any: the threshold lowered) and writes what one process writes."""
    from onnxstudio.cli import main

    path = big
    monkeypatch.setenv("ONNXSTUDIO_NO_LAYOUT_CACHE", "1")
    monkeypatch.setattr(batch, "POOL_NODES", 1)
    with monkeypatch.context() as patch:
        patch.setenv("ONNXSTUDIO_NO_FORK", "1")
        assert main(["export", str(path), str(tmp_path / "one.svg"), "--expand-all"]) == 0
    assert unit_pool.started() is None
    layered._CACHE.clear()
    here = _here(monkeypatch)
    try:
        assert main(["export", str(path), str(tmp_path / "pool.svg"), "--expand-all"]) == 0
        if unit_pool.refusal() is None:
            assert unit_pool.started() is not None
            assert len(here) <= 1  # the depth of many units went to the workers
    finally:
        unit_pool.shutdown()
    assert (tmp_path / "pool.svg").read_bytes() == (tmp_path / "one.svg").read_bytes()


def test_the_window_starts_the_pool_when_a_big_model_opens(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Started once the model is shown (threshold lowered here), so that its Expand All
    finds the workers ready; a small model starts none."""
    from tests.builders import tiny_mlp
    from tests.conftest import opened_tab, shown_window

    if unit_pool.refusal() is not None:
        pytest.skip(f"no worker pool here: {unit_pool.refusal()}")
    window = shown_window(qtbot)
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    tab = opened_tab(qtbot, window, path)
    qtbot.waitUntil(lambda: not tab.busy, timeout=60000)
    assert unit_pool.started() is None
    monkeypatch.setattr(batch, "POOL_NODES", 1)
    try:
        opened_tab(qtbot, window, save(tiny_mlp(), tmp_path / "big.onnx"))
        qtbot.waitUntil(lambda: unit_pool.started() is not None, timeout=60000)
        assert len(unit_pool.started().pids) == unit_pool.size()  # type: ignore[union-attr]
    finally:
        window.shutdown()
        unit_pool.shutdown()
