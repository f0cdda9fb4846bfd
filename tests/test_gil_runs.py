"""Bulk C work in runs: the same arrays as one call, at every length around a run."""

from __future__ import annotations

from itertools import chain

import numpy as np
import pytest

from onnxstudio.concurrency.gil_runs import RUN, fromiter_in_runs


@pytest.mark.parametrize("count", [0, 1, RUN - 1, RUN, RUN + 1, 3 * RUN + 7])
def test_fromiter_in_runs_is_fromiter(count: int) -> None:
    lists = [[i, i + 1] if i % 3 else [] for i in range(count)]
    flat = list(chain.from_iterable(lists))
    got = fromiter_in_runs(chain.from_iterable(lists), np.int64, len(flat))
    assert got.dtype == np.int64 and got.tolist() == flat
    lengths = fromiter_in_runs(map(len, lists), np.int64, count)
    assert lengths.tolist() == [len(x) for x in lists]
