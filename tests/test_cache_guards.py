"""The layout cache's and the task runner's guards, each proven by a test that fails
without it (issue 32: removing the unpickler's allow-list, gutting the code fingerprint
and the runner's stale-result check all at once had left the whole suite green)."""

from __future__ import annotations

import io
import pickle
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from onnxstudio import build_stamp
from onnxstudio.layout import cache
from onnxstudio.layout.state import default_state
from onnxstudio.layout.types import Layout
from tests.builders import save, tiny_mlp
from tests.test_layout_cache import builds, entries, fresh, opened

__all__ = ["builds"]  # the fixture, shared with test_layout_cache


def cached_mlp(tmp_path: Path) -> tuple[Path, Layout, Path]:
    """A small model laid out once, its entry on disk: (model, layout, entry)."""
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    layout = cache.layout_model(opened(path), default_state(opened(path).graph))
    (entry,) = entries()
    return path, layout, entry


def resign(entry: Path, payload: bytes, magic: bytes = cache.MAGIC) -> None:
    """Write ``payload`` as the entry, with a valid checksum: only the decoder can say no."""
    entry.write_bytes(magic + cache._check(entry.stem, payload) + payload)


def payload_of(entry: Path) -> bytes:
    return entry.read_bytes()[len(cache.MAGIC) + 32:]


class _Touch:
    """Unpickles as a call of ``open(path, "w")``: code running from a cache entry."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return open, (str(self.path), "w")


def test_hostile_entry_runs_nothing_and_is_only_a_miss(builds: list[str],
                                                        tmp_path: Path) -> None:
    path, expected, entry = cached_mlp(tmp_path)
    marker = tmp_path / "the entry ran code"
    hostile = io.BytesIO()
    pickle.dump(("TB", _Touch(marker), 1.0), hostile, 5)  # the layout's first pickle
    resign(entry, hostile.getvalue() + payload_of(entry))
    model = opened(path)
    assert cache.layout_model(model, default_state(model.graph)) == expected
    assert not marker.exists()
    assert len(builds) == 2  # laid out again, and the entry replaced by a good one
    assert cache.load(entry.stem, "layout", cache.decode_layout) == expected


def test_truncated_entry_with_a_valid_checksum_is_only_a_miss(builds: list[str],
                                                              tmp_path: Path) -> None:
    """A short write that was checksummed as it is (the decoder, not the checksum, says no)."""
    path, expected, entry = cached_mlp(tmp_path)
    payload = payload_of(entry)
    resign(entry, payload[: len(payload) * 2 // 3])
    model = opened(path)
    assert cache.layout_model(model, default_state(model.graph)) == expected
    assert len(builds) == 2


def test_entry_of_another_codec_version_is_ignored(builds: list[str], tmp_path: Path) -> None:
    path, expected, entry = cached_mlp(tmp_path)
    older = cache.MAGIC.replace(b" 2\n", b" 1\n")
    assert older != cache.MAGIC and len(older) == len(cache.MAGIC)
    resign(entry, payload_of(entry), older)  # the same payload, under the old version
    model = opened(path)
    assert cache.layout_model(model, default_state(model.graph)) == expected
    assert len(builds) == 2


def copy_sources(tmp_path: Path) -> Path:
    root = tmp_path / "onnxstudio"
    for part in build_stamp.PARTS:
        shutil.copytree(build_stamp.package_root() / part, root / part,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_code_fingerprint_follows_every_source_byte(tmp_path: Path) -> None:
    root = copy_sources(tmp_path)
    before = build_stamp.source_digest(root)
    assert before is not None and before == build_stamp.source_digest(build_stamp.package_root())
    source = root / "layout" / "layered.py"
    source.write_bytes(source.read_bytes().replace(b"CACHE_SIZE = 4096", b"CACHE_SIZE = 4097"))
    assert build_stamp.source_digest(root) not in (before, None)
    assert build_stamp.source_digest(tmp_path / "nothing here") is None


def test_real_fingerprint_is_the_sources_and_changes_the_key(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The key the cache really uses moves when a source file does."""
    cache.code_fingerprint.cache_clear()
    real = cache.code_fingerprint()
    assert real is not None
    root = copy_sources(tmp_path)
    source = root / "model" / "graph.py"
    source.write_bytes(source.read_bytes() + b"\n# one more line\n")
    monkeypatch.setattr(build_stamp, "package_root", lambda: root)
    cache.code_fingerprint.cache_clear()
    try:
        assert cache.code_fingerprint() not in (real, None)
    finally:
        cache.code_fingerprint.cache_clear()


def frozen(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, stamp: str | None) -> None:
    """As in a PyInstaller build: no sources beside the package, maybe a stamp."""
    root = tmp_path / "_internal" / "onnxstudio"
    root.mkdir(parents=True)
    if stamp is not None:
        (root / build_stamp.STAMP_NAME).write_text(stamp + "\n", "ascii")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(build_stamp, "package_root", lambda: root)
    cache.code_fingerprint.cache_clear()


def test_frozen_app_keeps_layouts_under_its_build_stamp(
        builds: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    stamp = build_stamp.write_stamp(tmp_path / "build").read_text("ascii").strip()
    assert stamp == build_stamp.source_digest(build_stamp.package_root())
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    state = default_state(opened(path).graph)
    frozen(monkeypatch, tmp_path / "app", stamp)
    try:
        first = cache.layout_model(opened(path), state)
        assert cache.layout_model(opened(path), state) == first == fresh(opened(path), state)
        assert len(builds) == 1 and len(entries()) == 1  # the second open was served
        frozen(monkeypatch, tmp_path / "next build", "f" * 64)
        cache.layout_model(opened(path), state)
        assert len(builds) == 2  # another build, another key
    finally:
        cache.code_fingerprint.cache_clear()


@pytest.mark.parametrize("stamp", [None, "not a digest"])
def test_frozen_app_without_a_good_stamp_lays_out_without_the_cache(
        builds: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        stamp: str | None) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    state = default_state(opened(path).graph)
    frozen(monkeypatch, tmp_path / "app", stamp)
    try:
        cache.layout_model(opened(path), state)
        cache.layout_model(opened(path), state)
        assert len(builds) == 2 and not entries()
    finally:
        cache.code_fingerprint.cache_clear()


def test_stale_task_result_is_dropped(qtbot) -> None:
    """A result already on its way when a newer task starts is never shown."""
    from PySide6.QtWidgets import QApplication

    from onnxstudio.ui.tasks import TaskRunner

    runner = TaskRunner()
    shown: list[str] = []
    stages: list[str] = []
    runner.finished.connect(shown.append)
    runner.progress.connect(lambda stage, _fraction: stages.append(stage))

    def old(context: Any) -> str:
        context.progress("old", 1.0)
        return "old"

    runner.start(old)
    assert TaskRunner.wait_all()  # its progress and result are queued, not yet delivered
    release = threading.Event()

    def new(context: Any) -> str:
        release.wait(30)
        return "new"

    runner.start(new)
    QApplication.processEvents()  # the old task's signals arrive now
    assert shown == [] and stages == []
    release.set()
    qtbot.waitUntil(lambda: shown == ["new"])
    assert not runner.busy
