"""Which spot each edge label takes, decided for a whole batch of spots in numpy.

The rule (render/edge_labels.py) is a greedy in order: each tensor's label takes the
first of its spots that is free (not blocked) and does not come within the gap of a
label taken before. Asked spot by spot in Python that was 60% of placing expanded
dag100k's 98k labels. Its answer is the first maximal independent set, in that order,
of the graph whose nodes are the free spots and whose links join two spots of one
tensor or two spots too close side by side: a spot is taken exactly when none of its
earlier neighbours is. That is decided here in rounds over all spots at once: a spot
whose earlier neighbours are all decided is taken unless one of them was taken, so
every round settles at least the first undecided spot, and in practice almost all
(a round is a few numpy passes over the links still open).
"""

from __future__ import annotations

import numpy as np

from onnxstudio.render.rect_join import any_per, pairs


def first_free(at: np.ndarray, free: np.ndarray, keys: np.ndarray, before: np.ndarray,
               gap: float) -> np.ndarray:
    """The rows of ``at`` (spots x, y, w, h, in the greedy's order) the greedy takes, in
    order: per key (tensor) at most one, each ``free``, none within ``gap`` side by side
    of a spot taken before it nor of ``before`` (labels taken earlier, rows x, y, w, h)."""
    rows = np.flatnonzero(free)
    if len(rows) and len(before):
        later, earlier = pairs(_spaced(at[rows], gap), before)
        near = _meets(at[rows[later]], before[earlier], gap)
        rows = rows[~any_per(later[near], len(rows))]
    if not len(rows):
        return rows
    spots = at[rows]
    _, key = np.unique(keys[rows], return_inverse=True)
    later, earlier = pairs(_spaced(spots, gap), spots)
    keep = later > earlier
    later, earlier = later[keep], earlier[keep]
    near = _meets(spots[later], spots[earlier], gap)
    return rows[_decide(later[near], earlier[near], key.reshape(-1))]


def _decide(later: np.ndarray, earlier: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Which spots (0..len(key), in order) are taken: links (``earlier``, ``later``)
    join spots too close, ``key`` groups the spots of which one at most is taken."""
    count = len(key)
    state = np.zeros(count, dtype=np.int8)  # 0 open, 1 taken, 2 not taken
    while True:
        # not taken: an earlier neighbour was taken, or a spot of the same key
        state[later[state[earlier] == 1]] = 2
        done = np.zeros(int(key.max()) + 1, dtype=bool)
        done[key[state == 1]] = True
        state[(state == 0) & done[key]] = 2
        open_ = np.flatnonzero(state == 0)
        if not len(open_):
            return np.flatnonzero(state == 1)
        # the links that still decide something: a later spot open, an earlier one open
        live = (state[later] == 0) & (state[earlier] == 0)
        later, earlier = later[live], earlier[live]
        waiting = np.zeros(count, dtype=bool)
        waiting[later] = True
        _, first = np.unique(key[open_], return_index=True)  # each key's first open spot
        chosen = open_[first]
        state[chosen[~waiting[chosen]]] = 1


def _spaced(rects: np.ndarray, gap: float) -> np.ndarray:
    """``rects`` with ``gap`` added at each side (where no earlier label may be)."""
    return np.stack((rects[:, 0] - gap, rects[:, 1], rects[:, 2] + 2 * gap, rects[:, 3]),
                    axis=1)


def _meets(spot: np.ndarray, other: np.ndarray, gap: float) -> np.ndarray:
    """Per row: whether ``spot`` grown by ``gap`` at each side overlaps ``other``, with
    the very float operations the greedy's grid made (the same labels to the bit)."""
    x = spot[:, 0] - gap
    x1 = x + (spot[:, 2] + 2 * gap)
    y, y1 = spot[:, 1], spot[:, 1] + spot[:, 3]
    ox, oy = other[:, 0], other[:, 1]
    return (x < ox + other[:, 2]) & (ox < x1) & (y < oy + other[:, 3]) & (oy < y1)
