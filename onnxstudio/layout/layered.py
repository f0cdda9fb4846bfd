"""Sugiyama-style layered layout of one flat graph of sized boxes (top to bottom).

The steps follow Gansner et al. (1993): break cycles (DFS, reversed edges flagged),
layer (longest path, then sinking nodes with more outputs than inputs towards their
consumers, a cheap stand-in for network simplex), split long edges into chains of
dummies (capped: beyond a budget, the longest edges are routed straight instead of
taking part in ordering, so far-reaching edges cannot blow up the cost), order layers
by weighted-median sweeps with adjacent transpositions keeping the best ordering seen,
then assign x by repeated isotonic least-squares sweeps (pool-adjacent-violators) that
pull each node under its neighbours while keeping order and spacing -- long-edge chains
get high weights so they run straight, which keeps the main data path straight.

Everything is plain Python lists: the graphs laid out here are one group at a time
(tens to hundreds of items), where numpy's per-call overhead would dominate.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Point = tuple[float, float]

NODE_SEP = 18.0  # horizontal gap between boxes
DUMMY_SEP = 8.0  # gap next to a long-edge dummy
RANK_SEP = 30.0  # vertical gap between layers
ORDER_SWEEPS = 6
DUMMY_BUDGET = 6.0  # at most this many dummies per real node (plus a constant)
PUSH_MAX = 60.0  # how far a snapping node may push its layer neighbours aside
SNAP_CHAINS = True  # single-input nodes straight under their input
W_RR, W_RD, W_DD = 1.0, 2.0, 8.0  # pull of real-real, real-dummy, dummy-dummy links


class LayoutCancelled(Exception):
    """Raised when the caller's cancel() returned True mid-layout."""


@dataclass
class DagResult:
    """Positions (top-left), per-edge routes in input edge order, and which were reversed."""

    x: list[float]
    y: list[float]
    width: float
    height: float
    routes: list[list[Point]]
    reversed: list[bool]
    rank: list[int]


def _break_cycles(n: int, succ: list[list[int]]) -> set[tuple[int, int]]:
    """Edges closing a cycle in an iterative DFS from nodes in index order."""
    state = [0] * n  # 0 new, 1 on stack, 2 done
    back: set[tuple[int, int]] = set()
    for start in range(n):
        if state[start]:
            continue
        state[start] = 1
        stack = [(start, iter(succ[start]))]
        while stack:
            v, it = stack[-1]
            for w in it:
                if state[w] == 1:
                    back.add((v, w))
                elif state[w] == 0:
                    state[w] = 1
                    stack.append((w, iter(succ[w])))
                    break
            else:
                state[v] = 2
                stack.pop()
    return back


def _layers(n: int, succ: list[list[int]], pred: list[list[int]]) -> tuple[list[int], list[int]]:
    """Longest-path ranks plus a topological order, then sink output-heavy nodes."""
    indeg = [len(p) for p in pred]
    order = [v for v in range(n) if indeg[v] == 0]
    rank = [0] * n
    i = 0
    while i < len(order):
        v = order[i]
        i += 1
        rv = rank[v] + 1
        for w in succ[v]:
            if rank[w] < rv:
                rank[w] = rv
            indeg[w] -= 1
            if indeg[w] == 0:
                order.append(w)
    for v in reversed(order):
        s = succ[v]
        if s and len(s) >= len(pred[v]):
            lowest = min(rank[w] for w in s) - 1
            if lowest > rank[v]:
                rank[v] = lowest
    return rank, order


def _count_pair(edges: list[tuple[float, float, float]]) -> float:
    """Weighted crossings between two layers; edges: (upper key, lower key, weight).

    Keys are slot positions plus port offsets (in [-0.5, 0.5)), so edges entering a
    group at different ports are ordered as drawn; equal keys never cross.
    """
    if len(edges) < 2:
        return 0.0
    items = sorted(edges)
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
    """Layer orderings with median sweeps and transpositions (Gansner et al. 1993)."""

    def __init__(self, layers: list[list[int]], up: list[list[tuple[int, float]]],
                 down: list[list[tuple[int, float]]], pos: list[int],
                 ports: dict[tuple[int, int], tuple[float, float]]) -> None:
        self.layers = layers
        self.up = up  # node -> [(neighbour in layer above, weight)]
        self.down = down
        self.pos = pos
        self.ports = ports  # link (a, b) -> port offsets at a's bottom, b's top (in slots)

    def crossings(self) -> float:
        total = 0.0
        pos, down, ports = self.pos, self.down, self.ports
        none = (0.0, 0.0)
        for layer in self.layers[:-1]:
            edges = []
            for v in layer:
                for w, wt in down[v]:
                    fa, fb = ports.get((v, w), none)
                    edges.append((pos[v] + fa, pos[w] + fb, wt))
            total += _count_pair(edges)
        return total

    def sweep(self, downward: bool) -> None:
        layers = self.layers
        pos = self.pos
        nbrs = self.up if downward else self.down
        ports = self.ports
        none = (0.0, 0.0)
        seq = range(1, len(layers)) if downward else range(len(layers) - 2, -1, -1)
        for li in seq:
            layer = layers[li]
            keyed = []
            for v in layer:
                nb = nbrs[v]
                if not nb:
                    keyed.append((float(pos[v]), 1, v))
                    continue
                if downward:
                    ps = sorted(pos[w] + ports.get((w, v), none)[0] for w, _ in nb)
                else:
                    ps = sorted(pos[w] + ports.get((v, w), none)[1] for w, _ in nb)
                m = len(ps)
                med = ps[m // 2] if m % 2 else (ps[m // 2 - 1] + ps[m // 2]) / 2.0
                keyed.append((med, 0, v))
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

    def transpose(self, rounds: int = 2) -> None:
        """Swap adjacent nodes while it removes crossings with both neighbouring layers."""
        pos, up, down, ports = self.pos, self.up, self.down, self.ports
        none = (0.0, 0.0)

        def cross(a: int, b: int) -> float:
            # crossings among edges of a and b if a is left of b
            c = 0.0
            for wa, xa in up[a]:
                pa = pos[wa] + ports.get((wa, a), none)[0]
                for wb, xb in up[b]:
                    if pos[wb] + ports.get((wb, b), none)[0] < pa:
                        c += xa * xb
            for wa, xa in down[a]:
                pa = pos[wa] + ports.get((a, wa), none)[1]
                for wb, xb in down[b]:
                    if pos[wb] + ports.get((b, wb), none)[1] < pa:
                        c += xa * xb
            return c

        for _ in range(rounds):
            improved = False
            for layer in self.layers:
                for i in range(len(layer) - 1):
                    a, b = layer[i], layer[i + 1]
                    if cross(a, b) > cross(b, a):
                        layer[i], layer[i + 1] = b, a
                        pos[a], pos[b] = i + 1, i
                        improved = True
            if not improved:
                break


def _pava(target: list[float], weight: list[float]) -> list[float]:
    """Weighted isotonic (non-decreasing) least-squares fit, pool adjacent violators."""
    vals: list[float] = []
    wts: list[float] = []
    cnt: list[int] = []
    for t, w in zip(target, weight, strict=False):
        vals.append(t)
        wts.append(w)
        cnt.append(1)
        while len(vals) > 1 and vals[-2] > vals[-1]:
            w2 = wts[-2] + wts[-1]
            v = (vals[-2] * wts[-2] + vals[-1] * wts[-1]) / w2
            c = cnt[-2] + cnt[-1]
            vals.pop()
            wts.pop()
            cnt.pop()
            vals[-1], wts[-1], cnt[-1] = v, w2, c
    out: list[float] = []
    for v, c in zip(vals, cnt, strict=False):
        out.extend([v] * c)
    return out


_CACHE: OrderedDict[tuple, DagResult] = OrderedDict()
_CACHE_LOCK = threading.Lock()  # the canvas and an export may lay out on two workers
CACHE_SIZE = 4096


def layout_dag(
    widths: Sequence[float],
    heights: Sequence[float],
    edges: Sequence[tuple[int, int]],
    *,
    weights: Sequence[float] | None = None,
    top: Sequence[int] = (),
    bottom: Sequence[int] = (),
    src_off: Sequence[float | None] | None = None,
    dst_off: Sequence[float | None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> DagResult:
    """Memoised ``_layout_dag`` (see there). Identical inputs recur all the time: every
    layer of a transformer is the same small graph, and re-laying out after a group is
    toggled repeats every group the toggle did not touch. Results are shared: treat
    them as read-only."""
    key = (tuple(widths), tuple(heights), tuple(edges),
           None if weights is None else tuple(weights), tuple(top), tuple(bottom),
           None if src_off is None else tuple(src_off),
           None if dst_off is None else tuple(dst_off))
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    res = _layout_dag(widths, heights, edges, weights=weights, top=top, bottom=bottom,
                      src_off=src_off, dst_off=dst_off, cancel=cancel)
    with _CACHE_LOCK:
        _CACHE[key] = res
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return res


def _layout_dag(
    widths: Sequence[float],
    heights: Sequence[float],
    edges: Sequence[tuple[int, int]],
    *,
    weights: Sequence[float] | None = None,
    top: Sequence[int] = (),
    bottom: Sequence[int] = (),
    src_off: Sequence[float | None] | None = None,
    dst_off: Sequence[float | None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> DagResult:
    """Lay out boxes ``0..n-1`` joined by directed ``edges`` from top to bottom.

    ``top``/``bottom``: zero-size port items forced onto a first/last layer of their own
    (a group's entries and exits). ``src_off[e]``/``dst_off[e]``: fixed x offset from the
    left of the source/target box where edge e leaves/enters (an expanded group's exit or
    entry for that tensor), or None to spread edges along the box side.
    """
    n = len(widths)
    m = len(edges)
    wts = list(weights) if weights is not None else [1.0] * m
    if n == 0:
        return DagResult([], [], 0.0, 0.0, [[] for _ in edges], [False] * m, [])

    # -- unique, loop-free edge set with summed weights -----------------------------
    uniq: dict[tuple[int, int], float] = {}
    for (u, v), w in zip(edges, wts, strict=False):
        if u != v:
            uniq[(u, v)] = uniq.get((u, v), 0.0) + w
    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in uniq:
        succ[u].append(v)
    back = _break_cycles(n, succ)
    dag: dict[tuple[int, int], float] = {}
    for (u, v), w in uniq.items():
        key = (v, u) if (u, v) in back else (u, v)
        dag[key] = dag.get(key, 0.0) + w
    succ = [[] for _ in range(n)]
    pred: list[list[int]] = [[] for _ in range(n)]
    for u, v in dag:
        succ[u].append(v)
        pred[v].append(u)

    rank, _topo = _layers(n, succ, pred)
    if top:
        rank = [r + 1 for r in rank]
        for t in top:
            rank[t] = 0
    if bottom:
        ends = set(bottom)
        last = max((r for i, r in enumerate(rank) if i not in ends), default=0) + 1
        for b in bottom:
            rank[b] = last
    nranks = max(rank) + 1

    # -- dummies for edges spanning several layers -----------------------------------
    # Long edges leaving the same node share one trunk of dummies (one tensor feeding
    # many far consumers, like an attention mask, is one bus rather than many lines);
    # trunks beyond the budget are not built and those edges are routed straight.
    width = list(widths)
    is_dummy = [False] * n
    chains: dict[tuple[int, int], list[int]] = {}
    fan: dict[int, list[int]] = {}
    for u, v in dag:
        if rank[v] - rank[u] > 1:
            fan.setdefault(u, []).append(v)
    trunks = sorted((max(rank[v] for v in vs) - rank[u] - 1, u) for u, vs in fan.items())
    budget = DUMMY_BUDGET * n + 200
    straight: set[tuple[int, int]] = set()
    total = 0
    for length, u in trunks:
        if total + length > budget:
            straight.update((u, v) for v in fan[u])
            continue
        total += length
        trunk = []
        for r in range(rank[u] + 1, rank[u] + 1 + length):
            trunk.append(len(width))
            width.append(0.0)
            rank.append(r)
            is_dummy.append(True)
        for v in fan[u]:
            chains[(u, v)] = trunk[: rank[v] - rank[u] - 1]
    N = len(width)
    seg_w: dict[tuple[int, int], float] = {}
    for (u, v), w in dag.items():
        if (u, v) in straight:
            continue
        path = [u, *chains.get((u, v), ()), v]
        for a, b in itertools.pairwise(path):
            ew = w * (W_DD if is_dummy[a] and is_dummy[b] else W_RD if is_dummy[a] or is_dummy[b]
                      else W_RR)
            seg_w[(a, b)] = seg_w.get((a, b), 0.0) + ew
    up: list[list[tuple[int, float]]] = [[] for _ in range(N)]
    down: list[list[tuple[int, float]]] = [[] for _ in range(N)]
    for (a, b), ew in seg_w.items():
        down[a].append((b, ew))
        up[b].append((a, ew))

    # -- initial order: DFS from sources in index order, then sweeps ------------------
    layers: list[list[int]] = [[] for _ in range(nranks)]
    seen = [False] * N
    for s in [v for v in range(n) if not up[v]] + list(range(N)):
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
    pos = [0] * N
    for layer in layers:
        for i, v in enumerate(layer):
            pos[v] = i
    # where fixed ports sit on their box, as a fraction of a slot, for the ordering
    ports: dict[tuple[int, int], tuple[float, float]] = {}
    if src_off is not None or dst_off is not None:
        port_acc: dict[tuple[int, int], list[list[float]]] = {}
        for e, (u, v) in enumerate(edges):
            if (u, v) not in dag or (u, v) in straight:
                continue
            so = src_off[e] if src_off is not None else None
            do = dst_off[e] if dst_off is not None else None
            slot = port_acc.setdefault((u, v), [[], []])
            if so is not None and widths[u] > 0:
                slot[0].append(min(0.49, max(-0.49, so / widths[u] - 0.5)))
            if do is not None and widths[v] > 0:
                slot[1].append(min(0.49, max(-0.49, do / widths[v] - 0.5)))
        for (u, v), (fs, fd) in port_acc.items():
            path = [u, *chains.get((u, v), ()), v]
            if fs:
                old = ports.get((u, path[1]), (0.0, 0.0))
                ports[(u, path[1])] = (sum(fs) / len(fs), old[1])
            if fd:
                old = ports.get((path[-2], v), (0.0, 0.0))
                ports[(path[-2], v)] = (old[0], sum(fd) / len(fd))
    ordering = _Ordering(layers, up, down, pos, ports)
    best = ordering.crossings()
    best_layers = [list(layer) for layer in layers]
    small = N <= 1500
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
    layers = best_layers
    for layer in layers:
        for i, v in enumerate(layer):
            pos[v] = i

    # -- x: isotonic sweeps pulling nodes under their neighbours ----------------------
    half = [w / 2.0 for w in width]
    # mean offset (from the centre) of each box's fixed exits/entries, for placement
    oport = [0.0] * N
    iport = [0.0] * N
    for offs, into in ((src_off, oport), (dst_off, iport)):
        if offs is None:
            continue
        sums: dict[int, list[float]] = {}
        for (u, v), off in zip(edges, offs, strict=False):
            if off is not None:
                sums.setdefault(u if into is oport else v, []).append(off)
        for i, vals in sums.items():
            into[i] = sum(vals) / len(vals) - half[i]
    x = [0.0] * N
    seps: list[list[float]] = []
    for layer in layers:
        cur = 0.0
        s_row = [0.0]
        for i, v in enumerate(layer):
            if i:
                a = layer[i - 1]
                gap = DUMMY_SEP if is_dummy[a] or is_dummy[v] else NODE_SEP
                cur += half[a] + half[v] + gap
                s_row.append(cur)
            x[v] = cur
        seps.append(s_row)

    def place(li: int, use_up: bool, use_down: bool) -> None:
        layer = layers[li]
        s_row = seps[li]
        tgt: list[float] = []
        wgt: list[float] = []
        for i, v in enumerate(layer):
            num = 0.0
            den = 0.0
            if use_up:
                for w, ew in up[v]:
                    num += ew * (x[w] + oport[w] - iport[v])
                    den += ew
            if use_down:
                for w, ew in down[v]:
                    num += ew * (x[w] + iport[w] - oport[v])
                    den += ew
            if den > 0:
                tgt.append(num / den - s_row[i])
                wgt.append(den)
            else:
                tgt.append(x[v] - s_row[i])
                wgt.append(0.05)
        fit = _pava(tgt, wgt)
        for i, v in enumerate(layer):
            x[v] = fit[i] + s_row[i]

    for _ in range(4):
        for li in range(1, nranks):
            place(li, True, False)
        for li in range(nranks - 2, -1, -1):
            place(li, False, True)
    for li in range(nranks):
        place(li, True, True)

    # -- snap: long-edge chains exactly vertical where the gaps allow ------------------
    # and single-input nodes right under their input (merges are left where they are:
    # snapping those too drifts whole stacks sideways)
    for li in range(1, nranks):
        layer = layers[li]
        last = len(layer) - 1
        for i, v in enumerate(layer):
            if len(up[v]) != 1:
                continue
            u = up[v][0][0]
            if not is_dummy[v] and (is_dummy[u] or not SNAP_CHAINS):
                continue  # real nodes with a single real input sit under it
            tx = x[u] + oport[u] - iport[v]
            if i > 0:
                a = layer[i - 1]
                gap = DUMMY_SEP if is_dummy[a] or is_dummy[v] else NODE_SEP
                short = x[a] + half[a] + gap + half[v] - tx
                if short > 1e-9:
                    if short > PUSH_MAX or is_dummy[v]:
                        continue
                    for w in layer[:i]:
                        x[w] -= short
            if i < last:
                b = layer[i + 1]
                gap = DUMMY_SEP if is_dummy[b] or is_dummy[v] else NODE_SEP
                short = tx - (x[b] - half[b] - gap - half[v])
                if short > 1e-9:
                    if short > PUSH_MAX or is_dummy[v]:
                        continue
                    for w in layer[i + 1:]:
                        x[w] += short
            x[v] = tx
    xmin = min(x[v] - half[v] for v in range(N))
    x = [xi - xmin for xi in x]
    total_w = max(x[v] + half[v] for v in range(N))

    # -- y: layer bands -----------------------------------------------------------------
    band = [0.0] * nranks
    for v in range(n):
        h = heights[v]
        if h > band[rank[v]]:
            band[rank[v]] = h
    ytop = [0.0] * nranks
    acc = 0.0
    for r in range(nranks):
        ytop[r] = acc
        acc += band[r] + RANK_SEP
    total_h = acc - RANK_SEP
    ys = [ytop[rank[v]] + (band[rank[v]] - heights[v]) / 2.0 for v in range(n)]
    xs = [x[v] - half[v] for v in range(n)]

    # -- routes -------------------------------------------------------------------------
    outs: dict[int, list[tuple[float, tuple[int, int]]]] = {}
    ins: dict[int, list[tuple[float, tuple[int, int]]]] = {}
    for u, v in dag:
        chain = chains.get((u, v), [])
        outs.setdefault(u, []).append((x[chain[0] if chain else v], (u, v)))
        ins.setdefault(v, []).append((x[chain[-1] if chain else u], (u, v)))
    start: dict[tuple[int, int], float] = {}
    end: dict[tuple[int, int], float] = {}
    for table, side in ((outs, start), (ins, end)):
        for u, lst in table.items():
            lst.sort()
            k = len(lst)
            step = min(10.0, widths[u] * 0.6 / k) if k > 1 else 0.0
            for i, (_, key) in enumerate(lst):
                side[key] = x[u] + (i - (k - 1) / 2.0) * step

    def route(u: int, v: int, sx: float | None, ex: float | None) -> list[Point]:
        pts: list[Point] = [(start[(u, v)] if sx is None else xs[u] + sx, ys[u] + heights[u])]
        for d in chains.get((u, v), ()):
            r = rank[d]
            pts.append((x[d], ytop[r]))
            if band[r] > 0:
                pts.append((x[d], ytop[r] + band[r]))
        pts.append((end[(u, v)] if ex is None else xs[v] + ex, ys[v]))
        return pts

    routes: list[list[Point]] = []
    rev: list[bool] = []
    for e, (u, v) in enumerate(edges):
        if u == v:
            routes.append([])
            rev.append(False)
        elif (u, v) in back:
            routes.append(route(v, u, None, None)[::-1])
            rev.append(True)
        else:
            sx = src_off[e] if src_off is not None else None
            ex = dst_off[e] if dst_off is not None else None
            routes.append(route(u, v, sx, ex))
            rev.append(False)
    return DagResult(xs, ys, total_w, total_h, routes, rev, rank[:n])
