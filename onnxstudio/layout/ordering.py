"""Ordering within layers: fewer crossings by weighted-median sweeps and transpositions.

Gansner et al. (1993): start from a depth-first order, sweep down and up placing each
item at the median of its neighbours in the layer just fixed, swap adjacent items while
that removes crossings, and keep the best ordering seen. Edges attached at fixed ports
(an expanded group's entry or exit for a tensor) count at their port's position.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter

import numpy as np

from onnxstudio.errors import Cancelled
from onnxstudio.layout.ranking import Dag, Link

ORDER_SWEEPS = 6
TRANSPOSE_MAX = 1500  # items; beyond this, transpositions cost more than they gain
PAIRWISE_MAX = 16  # edges between two layers up to which testing every pair beats a tree
PAIRS_MAX = 20_000  # link pairs of a unit up to which numpy tests them all at once

Ports = dict[tuple[int, int], tuple[float, float]]
Keys = list[list[tuple[float, float]]]  # per item: (neighbour's position, link weight)
_NONE = (0.0, 0.0)
_first = itemgetter(0)


class LayoutCancelled(Cancelled):
    """Raised when the caller's cancel() returned True mid-layout."""


def _count_pair(edges: list[tuple[float, float, float]]) -> float:
    """Weighted crossings between two layers; edges: (upper key, lower key, weight).

    Keys are slot positions plus port offsets (in [-0.5, 0.5)), so edges entering a
    group at different ports are ordered as drawn; equal keys never cross. Weights are
    whole numbers, so both ways of summing give the same total.
    """
    if len(edges) < 2:
        return 0.0
    items = sorted(edges)
    if len(items) <= PAIRWISE_MAX:
        total = 0.0
        for i, (_, lk, w) in enumerate(items):
            for _, lk2, w2 in items[i + 1:]:
                if lk2 < lk:
                    total += w * w2
        return total
    ranks = {k: i for i, k in enumerate(sorted({lk for _, lk, _ in items}))}
    size = len(ranks)
    tree = [0.0] * (size + 1)
    total = 0.0
    seen = 0.0
    for _, lk, w in items:
        r = ranks[lk]
        i = r + 1
        le = 0.0
        while i > 0:
            le += tree[i]
            i -= i & -i
        total += w * (seen - le)  # weight already inserted with a greater lower key
        seen += w
        i = r + 1
        while i <= size:
            tree[i] += w
            i += i & -i
    return total


_TRI: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # k -> every (i, j), i < j < k
Pairs = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
              np.ndarray]


def _link_pairs(between: list[list[tuple[int, int, float, float, float]]]) -> Pairs | None:
    """Every pair of links between the same two layers, fixed for a unit while only
    positions change: (sources, targets, their port offsets, pair firsts, seconds, pair
    weights). Two links cross when their ends are in opposite orders, so one numpy
    expression counts a whole unit (~100 items: a tenth of counting it layer by layer in
    Python). None when the pairs are too many to hold (a very wide unit)."""
    sizes = [len(links) for links in between]
    if sum(k * (k - 1) // 2 for k in sizes) > PAIRS_MAX:
        return None
    flat = [link for links in between for link in links]
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    start = 0
    for k in sizes:
        if k > 1:
            tri = _TRI.get(k)
            if tri is None:
                tri = _TRI[k] = np.triu_indices(k, 1)
            firsts.append(tri[0] + start)
            seconds.append(tri[1] + start)
        start += k
    src = np.array([link[0] for link in flat], dtype=np.intp)
    dst = np.array([link[1] for link in flat], dtype=np.intp)
    w = np.array([link[2] for link in flat], dtype=float)
    fa = np.array([link[3] for link in flat], dtype=float)
    fb = np.array([link[4] for link in flat], dtype=float)
    i = np.concatenate(firsts) if firsts else np.zeros(0, dtype=np.intp)
    j = np.concatenate(seconds) if seconds else np.zeros(0, dtype=np.intp)
    return src, dst, fa, fb, i, j, w[i] * w[j]


class _Ordering:
    """Layer orderings with median sweeps and transpositions."""

    def __init__(self, layers: list[list[int]], up: list[list[Link]],
                 down: list[list[Link]], pos: list[int], ports: Ports, local: bool) -> None:
        self.layers = layers
        self.pos = pos
        self.local = local  # every link joins neighbouring layers (not so only via ports)
        # Port offsets (link (a, b) -> offsets at a's bottom, b's top, in slots) looked up
        # once: item -> [(neighbour above, weight, offset at that neighbour's bottom)] ...
        get = ports.get
        self.up = [[(w, x, get((w, v), _NONE)[0]) for w, x in links]
                   for v, links in enumerate(up)]
        # ... and [(neighbour below, weight, offset at its top)]
        self.down = [[(w, x, get((v, w), _NONE)[1]) for w, x in links]
                     for v, links in enumerate(down)]
        # per layer but the last: its links down as (item, neighbour, weight, offsets)
        self.between = [[(v, w, x, *get((v, w), _NONE)) for v in layer for w, x in down[v]]
                        for layer in layers[:-1]]
        self._pairs = _link_pairs(self.between)

    def crossings(self) -> float:
        pos = self.pos
        pairs = self._pairs
        if pairs is not None:
            p = np.array(pos, dtype=float)
            src, dst, fa, fb, i, j, ww = pairs
            upper = p[src] + fa
            lower = p[dst] + fb
            return float(ww[(upper[i] - upper[j]) * (lower[i] - lower[j]) < 0].sum())
        return sum(_count_pair([(pos[v] + fa, pos[w] + fb, x) for v, w, x, fa, fb in links])
                   for links in self.between)

    def _medians(self, layer: list[int], downward: bool) -> list[tuple[float, int, int]]:
        """(key, 1 if it has no neighbour there else 0, item) for each item of ``layer``.
        Most items have one or two neighbours: their median needs no sort."""
        pos = self.pos
        nbrs = self.up if downward else self.down
        keyed = []
        for v in layer:
            nb = nbrs[v]
            m = len(nb)
            if m == 1:
                w, _, f = nb[0]
                keyed.append((pos[w] + f, 0, v))
            elif m == 2:
                (w, _, f), (w2, _, f2) = nb
                keyed.append(((pos[w] + f + (pos[w2] + f2)) / 2.0, 0, v))
            elif not m:
                keyed.append((float(pos[v]), 1, v))
            else:
                ps = sorted([pos[w] + f for w, _, f in nb])
                med = ps[m // 2] if m % 2 else (ps[m // 2 - 1] + ps[m // 2]) / 2.0
                keyed.append((med, 0, v))
        return keyed

    def sweep(self, downward: bool) -> None:
        layers = self.layers
        pos = self.pos
        seq = range(1, len(layers)) if downward else range(len(layers) - 2, -1, -1)
        for li in seq:
            layer = layers[li]
            keyed = self._medians(layer, downward)
            # nodes without neighbours keep their slot: place them by current position
            fixed = {k[2]: k[0] for k in keyed if k[1]}
            movable = sorted([k for k in keyed if not k[1]] if fixed else keyed, key=_first)
            if fixed:
                new: list[int] = [0] * len(layer)
                taken = set()
                for v, p in fixed.items():
                    new[int(p)] = v
                    taken.add(int(p))
                it = iter(movable)
                for i in range(len(layer)):
                    if i not in taken:
                        new[i] = next(it)[2]
                layer[:] = new
            else:
                layer[:] = [k[2] for k in movable]
            for i, v in enumerate(layer):
                pos[v] = i

    def _keys(self, layer: list[int]) -> tuple[Keys, Keys]:
        """Per item of ``layer``: (position of each neighbour above, weight), then below,
        port offsets included; fixed while only ``layer`` itself is reordered."""
        pos, up, down = self.pos, self.up, self.down
        return ([[(pos[w] + f, x) for w, x, f in up[v]] for v in layer],
                [[(pos[w] + f, x) for w, x, f in down[v]] for v in layer])

    def transpose(self, rounds: int = 2) -> None:
        """Swap adjacent nodes while it removes crossings with both neighbouring layers.

        Neighbour positions are looked up once per layer pass (swaps move only the layer
        itself) as long as every link joins neighbouring layers (``self.local``)."""
        pos, layers, up, down = self.pos, self.layers, self.up, self.down
        # a layer whose last pass swapped nothing, and whose neighbours have not moved
        # since, would swap nothing again: its pass is skipped
        settled = [len(layer) < 2 for layer in layers]
        local = self.local
        for _ in range(rounds):
            improved = False
            for li, layer in enumerate(layers):
                if settled[li]:
                    continue
                settled[li] = local
                ups = [[(pos[w] + f, x) for w, x, f in up[v]] for v in layer]
                downs = [[(pos[w] + f, x) for w, x, f in down[v]] for v in layer]
                ua, da = ups[0], downs[0]
                for i in range(len(layer) - 1):
                    ub, db = ups[i + 1], downs[i + 1]
                    # crossings with a left of b, less those with b left of a (whole
                    # numbers: the difference's sign is exact)
                    d = 0.0
                    for ka, xa in ua:
                        for kb, xb in ub:
                            if kb < ka:
                                d += xa * xb
                            elif ka < kb:
                                d -= xa * xb
                    for ka, xa in da:
                        for kb, xb in db:
                            if kb < ka:
                                d += xa * xb
                            elif ka < kb:
                                d -= xa * xb
                    if d > 0:
                        a, b = layer[i], layer[i + 1]
                        layer[i], layer[i + 1] = b, a
                        pos[a], pos[b] = i + 1, i
                        improved = True
                        settled[li] = False
                        if li:
                            settled[li - 1] = False
                        if li + 1 < len(layers):
                            settled[li + 1] = False
                        if not local:
                            ups, downs = self._keys(layer)
                            ub, db = ups[i + 1], downs[i + 1]
                        else:
                            ups[i], ups[i + 1] = ub, ua
                            downs[i], downs[i + 1] = db, da
                            ub, db = ua, da
                    ua, da = ub, db
            if not improved:
                break


def initial_layers(g: Dag) -> list[list[int]]:
    """Depth-first from the sources in index order: related items start side by side."""
    layers: list[list[int]] = [[] for _ in range(g.nranks)]
    size, rank, up, down = g.size, g.rank, g.up, g.down
    seen = [False] * size
    for s in [v for v in range(g.n) if not up[v]] + list(range(size)):
        if seen[s]:
            continue
        stack = [s]
        while stack:
            v = stack.pop()
            if seen[v]:
                continue
            seen[v] = True
            layers[rank[v]].append(v)
            links = down[v]
            if len(links) == 1:  # most items: no list to make
                w = links[0][0]
                if not seen[w]:
                    stack.append(w)
            elif links:
                stack.extend([w for w, _ in reversed(links) if not seen[w]])
    return layers


def port_slots(g: Dag, edges: Sequence[tuple[int, int]], widths: Sequence[float],
               src_off: Sequence[float | None] | None,
               dst_off: Sequence[float | None] | None) -> Ports:
    """Where fixed ports sit on their box, as a fraction of a slot, per first/last link.

    Only the edges with an offset are walked (a unit of plain boxes has none: dag100k's
    units spent 0.6 s making a slot for every edge). Links share a port slot when edges
    from one box share a trunk: the last edge, in order of each edge's first appearance,
    decides it."""
    ports: Ports = {}
    if src_off is None and dst_off is None:
        return ports
    m = len(edges)
    so_all = src_off if src_off is not None else [None] * m
    do_all = dst_off if dst_off is not None else [None] * m
    fixed = [e for e, (so, do) in enumerate(zip(so_all, do_all, strict=False))
             if so is not None or do is not None]
    if not fixed:
        return ports
    dag, straight = g.dag, g.straight
    acc: dict[tuple[int, int], list[list[float]]] = {}
    for e in fixed:
        u, v = edges[e]
        if (u, v) not in dag or (u, v) in straight:
            continue
        so = so_all[e]
        do = do_all[e]
        slot = acc.setdefault((u, v), [[], []])
        if so is not None and widths[u] > 0:
            slot[0].append(min(0.49, max(-0.49, so / widths[u] - 0.5)))
        if do is not None and widths[v] > 0:
            slot[1].append(min(0.49, max(-0.49, do / widths[v] - 0.5)))
    order = list(acc)
    if len(order) > 1:  # by each edge's first appearance among all edges
        first = dict(zip(reversed(edges), range(m - 1, -1, -1), strict=True))
        order.sort(key=first.__getitem__)
    for u, v in order:
        fs, fd = acc[(u, v)]
        path = [u, *g.chains.get((u, v), ()), v]
        if fs:
            old = ports.get((u, path[1]), _NONE)
            ports[(u, path[1])] = (sum(fs) / len(fs), old[1])
        if fd:
            old = ports.get((path[-2], v), _NONE)
            ports[(path[-2], v)] = (old[0], sum(fd) / len(fd))
    return ports


def order_layers(g: Dag, ports: Ports, cancel: Callable[[], bool] | None
                 ) -> list[list[int]]:
    """The best ordering found (items of each layer, left to right)."""
    layers = initial_layers(g)
    pos = [0] * g.size
    for layer in layers:
        for i, v in enumerate(layer):
            pos[v] = i
    small = g.size <= TRANSPOSE_MAX
    rank = g.rank
    local = not small or all(rank[w] == rank[v] + 1 for v in range(g.size) for w, _ in g.down[v])
    ordering = _Ordering(layers, g.up, g.down, pos, ports, local)
    best = ordering.crossings()
    best_layers = [list(layer) for layer in layers]
    for it in range(ORDER_SWEEPS if best > 0 else 0):
        if cancel is not None and cancel():
            raise LayoutCancelled
        ordering.sweep(downward=it % 2 == 0)
        if small:
            ordering.transpose()
        c = ordering.crossings()
        if c < best:
            best = c
            best_layers = [list(layer) for layer in layers]
        if best == 0:
            break
    return best_layers
