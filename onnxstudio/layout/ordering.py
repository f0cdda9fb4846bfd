"""Ordering within layers: fewer crossings by weighted-median sweeps and transpositions.

Gansner et al. (1993): start from a depth-first order, sweep down and up placing each
item at the median of its neighbours in the layer just fixed, swap adjacent items while
that removes crossings, and keep the best ordering seen. Edges attached at fixed ports
(an expanded group's entry or exit for a tensor) count at their port's position.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from onnxstudio.errors import Cancelled
from onnxstudio.layout.ranking import Dag, Link

ORDER_SWEEPS = 6
TRANSPOSE_MAX = 1500  # items; beyond this, transpositions cost more than they gain
PAIRWISE_MAX = 16  # edges between two layers up to which testing every pair beats a tree

Ports = dict[tuple[int, int], tuple[float, float]]
Keys = list[list[tuple[float, float]]]  # per item: (neighbour's position, link weight)
_NONE = (0.0, 0.0)


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

    def crossings(self) -> float:
        pos = self.pos
        return sum(_count_pair([(pos[v] + fa, pos[w] + fb, x) for v, w, x, fa, fb in links])
                   for links in self.between)

    def _medians(self, layer: list[int], downward: bool) -> list[tuple[float, int, int]]:
        """(key, 1 if it has no neighbour there else 0, item) for each item of ``layer``."""
        pos = self.pos
        nbrs = self.up if downward else self.down
        keyed = []
        for v in layer:
            nb = nbrs[v]
            if not nb:
                keyed.append((float(pos[v]), 1, v))
                continue
            ps = sorted([pos[w] + f for w, _, f in nb])
            m = len(ps)
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
            movable = sorted((k for k in keyed if not k[1]), key=lambda k: k[0])
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
        pos, layers = self.pos, self.layers
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
                ups, downs = self._keys(layer)
                ua, da = ups[0], downs[0]
                for i in range(len(layer) - 1):
                    ub, db = ups[i + 1], downs[i + 1]
                    # crossings with a left of b (ab) and with b left of a (ba)
                    ab = ba = 0.0
                    for side_a, side_b in ((ua, ub), (da, db)):
                        for ka, xa in side_a:
                            for kb, xb in side_b:
                                if kb < ka:
                                    ab += xa * xb
                                elif ka < kb:
                                    ba += xa * xb
                    if ab > ba:
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
            stack.extend(w for w, _ in reversed(down[v]) if not seen[w])
    return layers


def port_slots(g: Dag, edges: Sequence[tuple[int, int]], widths: Sequence[float],
               src_off: Sequence[float | None] | None,
               dst_off: Sequence[float | None] | None) -> Ports:
    """Where fixed ports sit on their box, as a fraction of a slot, per first/last link."""
    ports: Ports = {}
    if src_off is None and dst_off is None:
        return ports
    acc: dict[tuple[int, int], list[list[float]]] = {}
    for e, (u, v) in enumerate(edges):
        if (u, v) not in g.dag or (u, v) in g.straight:
            continue
        so = src_off[e] if src_off is not None else None
        do = dst_off[e] if dst_off is not None else None
        slot = acc.setdefault((u, v), [[], []])
        if so is not None and widths[u] > 0:
            slot[0].append(min(0.49, max(-0.49, so / widths[u] - 0.5)))
        if do is not None and widths[v] > 0:
            slot[1].append(min(0.49, max(-0.49, do / widths[v] - 0.5)))
    for (u, v), (fs, fd) in acc.items():
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
