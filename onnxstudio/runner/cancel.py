"""Stopping a background job all the way down: a token the caller cancels from any thread.

Every onnxruntime run started under the token is terminated at its next node boundary
(``RunOptions.terminate``), so Cancel on a profile, capture, compare or "run this part"
frees the CPU at once instead of after the model finishes. The Qt side (``ui/tasks``)
cancels the token with its task; the CLI never does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from onnxstudio.errors import Cancelled

if TYPE_CHECKING:
    import onnxruntime as ort


class CancelToken:
    """Cancelled once, for good; ``watch`` hooks run at cancel (or at once if already)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._hooks: list[Callable[[], None]] = []

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook()

    def release(self) -> None:
        """The job is over: drop the hooks here, on its own thread. A session's ``cancel``
        keeps its onnxruntime session alive; freed with the token on the GUI thread, BERT-96's
        froze the window for 65 ms when a profile landed."""
        with self._lock:
            hooks, self._hooks = self._hooks, []
        hooks.clear()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def check(self) -> None:
        if self._cancelled:
            raise Cancelled("cancelled")

    def watch(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` when cancelled (e.g. ``Session.cancel``)."""
        with self._lock:
            if not self._cancelled:
                self._hooks.append(hook)
                return
        hook()

    @contextmanager
    def run_options(self) -> Iterator[ort.RunOptions]:
        """RunOptions for one raw ``InferenceSession.run`` that cancel terminates;
        raises Cancelled (instead of onnxruntime's error) when that is why it stopped."""
        import onnxruntime as ort

        self.check()
        options = ort.RunOptions()
        options.log_severity_level = 4
        self.watch(lambda: setattr(options, "terminate", True))
        try:
            yield options
        except Exception as exc:
            if self._cancelled and not isinstance(exc, Cancelled):
                raise Cancelled("cancelled") from exc
            raise

