"""Pair the nodes of two graphs by structure first, names second.

Names are the first thing a re-export, a rename pass or an optimiser changes, so they
cannot be the key. Each node gets structural fingerprints instead: an *upstream* hash
(its operator and, recursively, what feeds each input slot) and a *downstream* hash (its
operator and, recursively, who reads each output). A change upstream of a node leaves its
downstream hash intact and vice versa, so after one edit every node still has one
fingerprint in common with its counterpart. Nodes whose fingerprint is unique on both
sides are anchors; matches then spread to neighbours, then to equal names, then to a node
squeezed between matched neighbours (an operator swapped for another). Where spreading
meets a node inserted or removed, the two chains above are aligned before pairing, so a
repeated Conv, Relu pattern is not shifted by one. Every pass is
a few dictionary walks over the edges, so the whole is linear in graph size.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

from onnxstudio.concurrency.gil_runs import dismantle
from onnxstudio.model.graph import Attribute, Graph, Node, TensorSummary


def _attr_key(attr: Attribute, node: Node) -> Hashable:
    """A hashable form of an attribute value; a body is summarised by its operators."""
    value = attr.value
    if attr.type == "GRAPH":
        return body_signature(node.subgraphs.get(value))
    if attr.type == "GRAPHS":
        return tuple(body_signature(node.subgraphs.get(v)) for v in value)
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, TensorSummary):
        return (value.dtype, value.shape, value.preview)
    return value


def body_signature(body: Graph | None) -> Hashable:
    """What an If/Loop/Scan body does, independent of its value names."""
    if body is None:
        return None
    return tuple(sorted((n.domain, n.op_type, len(n.inputs)) for n in body.walk()))


def attribute_keys(node: Node) -> dict[str, Hashable]:
    return {a.name: _attr_key(a, node) for a in node.attributes}


_ALIGN_STEPS = 12  # how far two chains are compared to tell a removal from an insertion
Source = tuple[int, int]
"""Where an input comes from: (producer index, output k), or (-1, token id)."""


@dataclass(frozen=True)
class _Wiring:
    """Where each node's inputs come from and where its outputs go, by index."""

    order: list[int]  # a topological order (nodes of a cycle, if any, last)
    sources: list[list[Source]]
    readers: list[list[tuple[int, int, int]]]  # per node: (consumer, its slot, our output k)
    graph_outputs: list[tuple[int, ...]]  # per node: which outputs are graph outputs
    tokens: list[tuple[Hashable, Hashable]]  # (strong, weak) form of each token id


def _wiring(graph: Graph) -> _Wiring:
    nodes = graph.nodes
    made: dict[str, Source] = {}
    for i, node in enumerate(nodes):
        for k, name in enumerate(node.outputs):
            if name:
                made[name] = (i, k)
    inputs = set(graph.inputs)
    inits = graph.initializers
    token_ids: dict[Hashable, int] = {}
    tokens: list[tuple[Hashable, Hashable]] = []

    def token(strong: Hashable, weak: Hashable) -> Source:
        tid = token_ids.get(strong)
        if tid is None:
            tid = token_ids[strong] = len(tokens)
            tokens.append((strong, weak))
        return (-1, tid)

    sources: list[list[Source]] = []
    readers: list[list[tuple[int, int, int]]] = [[] for _ in nodes]
    sorted_already = True
    for i, node in enumerate(nodes):
        row: list[Source] = []
        for slot, name in enumerate(node.inputs):
            src = made.get(name) if name else None
            if src is not None:
                row.append(src)
                readers[src[0]].append((i, slot, src[1]))
                sorted_already = sorted_already and src[0] < i
            elif not name:
                row.append(token(("none",), ("none",)))
            elif name in inits:
                info = inits[name]
                row.append(token(("weight", info.dtype, info.shape), ("weight",)))
            elif name in inputs:
                row.append(token(("input",), ("input",)))
            else:
                row.append(token(("outer", name), ("outer", name)))
        sources.append(row)
    outs = set(graph.outputs)
    graph_outputs = [tuple(k for k, n in enumerate(node.outputs) if n in outs) for node in nodes]
    order = list(range(len(nodes))) if sorted_already else _topological(len(nodes), sources)
    return _Wiring(order, sources, readers, graph_outputs, tokens)


def _topological(n: int, sources: Sequence[Sequence[Source]]) -> list[int]:
    """Kahn's order, for the graphs whose node list is not sorted already."""
    pending = [0] * n
    after: list[list[int]] = [[] for _ in range(n)]
    for i, row in enumerate(sources):
        for p, _k in row:
            if p >= 0:
                pending[i] += 1
                after[p].append(i)
    ready = [i for i in range(n) if pending[i] == 0]
    ready.reverse()
    order: list[int] = []
    while ready:
        i = ready.pop()
        order.append(i)
        for j in reversed(after[i]):
            pending[j] -= 1
            if pending[j] == 0:
                ready.append(j)
    if len(order) < n:  # a cycle: keep what remains in file order
        seen = set(order)
        order.extend(i for i in range(n) if i not in seen)
    return order


def _hashes(labels: Sequence[int], w: _Wiring, strength: int) -> tuple[list[int], list[int]]:
    """Upstream and downstream hashes of every node under the given labels."""
    n = len(labels)
    tokens = [hash(t[strength]) for t in w.tokens]
    up = [0] * n
    sources = w.sources
    for i in w.order:
        up[i] = hash((labels[i], tuple(hash((up[p], k)) if p >= 0 else tokens[k]
                                       for p, k in sources[i])))
    down = [0] * n
    readers, graph_outputs = w.readers, w.graph_outputs
    for i in reversed(w.order):
        row = readers[i]
        below = tuple(sorted(hash((down[c], slot, k)) for c, slot, k in row)) if row else ()
        down[i] = hash((labels[i], graph_outputs[i], below))
    return up, down


class _Side:
    """One graph's labels, wiring and fingerprints at two strengths (computed when asked:
    a renamed copy is fully matched on the strong ones)."""

    LEVELS = 6  # strong full, up, down; weak full, up, down

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.wiring = _wiring(graph)
        # The operator alone: a kernel moved to another domain (onnxruntime's NCHWc Conv)
        # is still the same operator for pairing; the diff reports the domain change.
        self.weak = [hash(n.op_type) for n in graph.nodes]
        self._keys: dict[int, list[int]] = {}
        self._strong: list[int] | None = None

    @property
    def strong(self) -> list[int]:
        """Operator, domain, arity and attributes of each node."""
        if self._strong is None:
            self._strong = [
                hash((n.domain, n.op_type, len(n.inputs), len(n.outputs),
                      tuple(sorted(attribute_keys(n).items(), key=lambda kv: kv[0]))))
                for n in self.graph.nodes]
        return self._strong

    def above(self, i: int) -> int:
        """The producer of a node's first input, or -1."""
        row = self.wiring.sources[i]
        return row[0][0] if row else -1

    def keys(self, level: int) -> list[int]:
        if level not in self._keys:
            strength = level // 3
            labels = self.weak if strength else self.strong
            up, down = _hashes(labels, self.wiring, strength)
            self._keys[3 * strength] = [hash(p) for p in zip(up, down, strict=True)]
            self._keys[3 * strength + 1] = up
            self._keys[3 * strength + 2] = down
        return self._keys[level]


class Matcher:
    """Builds the node pairing of graph A to graph B (indices into ``graph.nodes``)."""

    def __init__(self, a: Graph, b: Graph) -> None:
        self.a, self.b = _Side(a), _Side(b)
        self.a_to_b: list[int] = [-1] * len(a.nodes)
        self.b_to_a: list[int] = [-1] * len(b.nodes)
        self._queue: list[tuple[int, int]] = []

    def run(self) -> list[int]:
        steps: list[Callable[[], None]] = [
            *(self._anchoring(level, ties=False) for level in range(_Side.LEVELS)),
            *(self._anchoring(level, ties=True) for level in range(_Side.LEVELS)),
            self._by_name, self._squeezed, self._by_output_name]
        for step in steps:
            if self._done():
                break
            step()
            self._spread()
        return self.a_to_b

    def _done(self) -> bool:
        return -1 not in self.a_to_b or -1 not in self.b_to_a

    def _anchoring(self, level: int, ties: bool) -> Callable[[], None]:
        return lambda: self._anchor(self.a.keys(level), self.b.keys(level), ties)

    def _pair(self, i: int, j: int) -> None:
        self.a_to_b[i] = j
        self.b_to_a[j] = i
        self._queue.append((i, j))

    def _anchor(self, keys_a: Sequence[int], keys_b: Sequence[int], ties: bool) -> None:
        """Pair unmatched nodes whose key is unique on both sides (or, with ``ties``,
        equally frequent on both: then in topological order, i.e. by position)."""
        groups_a = _groups(keys_a, self.a_to_b, self.a.wiring.order)
        groups_b = _groups(keys_b, self.b_to_a, self.b.wiring.order)
        for key, members_a in groups_a.items():
            members_b = groups_b.get(key)
            if not members_b or len(members_a) != len(members_b):
                continue
            if len(members_a) == 1 or ties:
                for i, j in zip(members_a, members_b, strict=True):
                    self._pair(i, j)

    def _spread(self) -> None:
        """From each matched pair, match the producers slot by slot and the readers
        of each output when one reader of a kind (operator, slot) is left per side."""
        wa, wb = self.a.wiring, self.b.wiring
        while self._queue:
            i, j = self._queue.pop()
            for (p, k), (q, m) in zip(wa.sources[i], wb.sources[j], strict=False):
                if p >= 0 and q >= 0 and k == m and self.a_to_b[p] < 0 and self.b_to_a[q] < 0:
                    if self.a.weak[p] == self.b.weak[q]:
                        self._pair(p, q)
                    else:
                        self._look_through(p, q)
            self._spread_readers(wa.readers[i], wb.readers[j])

    def _look_through(self, p: int, q: int) -> None:
        """Producers that differ: one side may have a node inserted (or the other one
        removed) right there, so try the producer just above it. In a chain that repeats
        (Conv, Relu, Conv, Relu) both guesses fit one step: the one whose chains above
        stay alike longer is the edit (a Relu removed, not every Conv shifted by one)."""
        options = [(x, y) for x, y in ((p, self.b.above(q)), (self.a.above(p), q))
                   if x >= 0 and y >= 0 and self.a_to_b[x] < 0 and self.b_to_a[y] < 0
                   and self.a.weak[x] == self.b.weak[y]]
        if options:
            self._pair(*max(options, key=lambda xy: self._alike_above(*xy)))

    def _alike_above(self, x: int, y: int) -> int:
        """How far up the first-input chains of ``x`` and ``y`` stay alike (operator and
        attributes); reaching an already matched pair counts as alike all the way."""
        for steps in range(_ALIGN_STEPS):
            if x < 0 or y < 0:
                return steps
            if self.a_to_b[x] >= 0 or self.b_to_a[y] >= 0:
                return _ALIGN_STEPS if self.a_to_b[x] == y else steps
            if self.a.strong[x] != self.b.strong[y]:
                return steps
            x, y = self.a.above(x), self.b.above(y)
        return _ALIGN_STEPS

    def _spread_readers(self, readers_a: Iterable[tuple[int, int, int]],
                        readers_b: Iterable[tuple[int, int, int]]) -> None:
        kinds_a: dict[tuple[int, int, int], list[int]] = defaultdict(list)
        for c, slot, k in readers_a:
            if self.a_to_b[c] < 0:
                kinds_a[(self.a.weak[c], slot, k)].append(c)
        if not kinds_a:
            return
        kinds_b: dict[tuple[int, int, int], list[int]] = defaultdict(list)
        for c, slot, k in readers_b:
            if self.b_to_a[c] < 0:
                kinds_b[(self.b.weak[c], slot, k)].append(c)
        for kind, group_a in kinds_a.items():
            group_b = kinds_b.get(kind)
            if group_b and len(group_a) == len(group_b):
                for p, q in zip(group_a, group_b, strict=True):
                    if self.a_to_b[p] < 0 and self.b_to_a[q] < 0:
                        self._pair(p, q)

    def _by_name(self) -> None:
        names_b: dict[tuple[str, int], list[int]] = defaultdict(list)
        for j, node in enumerate(self.b.graph.nodes):
            if node.name and self.b_to_a[j] < 0:
                names_b[(node.name, self.b.weak[j])].append(j)
        for i, node in enumerate(self.a.graph.nodes):
            if node.name and self.a_to_b[i] < 0:
                found = names_b.get((node.name, self.a.weak[i]))
                if found and len(found) == 1 and self.b_to_a[found[0]] < 0:
                    self._pair(i, found[0])

    def _by_output_name(self) -> None:
        """Last resort, whatever the operators: the nodes that make a same-named tensor
        (a fused kernel keeps the name of the value its chain produced; onnxruntime's
        NCHWc kernels append ``_nchwc`` to it, in their output or their own name)."""
        made_b: dict[str, int] = {}
        for j, node in enumerate(self.b.graph.nodes):
            if self.b_to_a[j] < 0:
                for name in (*node.outputs, node.name):
                    if name:
                        made_b.setdefault(name.removesuffix("_nchwc"), j)
        for i, node in enumerate(self.a.graph.nodes):
            if self.a_to_b[i] >= 0:
                continue
            j = next((made_b[n] for n in node.outputs if n in made_b), -1)
            if j >= 0 and self.b_to_a[j] < 0:
                self._pair(i, j)

    def _squeezed(self) -> None:
        """An unmatched node whose matched producers and matched readers all map to the
        neighbours of one unmatched node on the other side is that node, whatever its
        operator now. Both kinds of neighbour must vouch for it."""
        proposals: dict[int, list[int]] = defaultdict(list)
        for i in range(len(self.a_to_b)):
            if self.a_to_b[i] < 0:
                above, below = self._from_producers(i), self._from_readers(i)
                if above is not None and below is not None:
                    both = above & below
                    if len(both) == 1:
                        proposals[next(iter(both))].append(i)
        for j, froms in proposals.items():
            if len(froms) == 1:
                self._pair(froms[0], j)

    def _from_producers(self, i: int) -> set[int] | None:
        """Unmatched B nodes reading what the images of ``i``'s producers make."""
        wb = self.b.wiring
        found: set[int] | None = None
        for p, k in self.a.wiring.sources[i]:
            q = self.a_to_b[p] if p >= 0 else -1
            if q >= 0:
                near = {c for c, _s, m in wb.readers[q] if m == k and self.b_to_a[c] < 0}
                found = near if found is None else found & near
        return found

    def _from_readers(self, i: int) -> set[int] | None:
        """Unmatched B nodes feeding the images of ``i``'s readers in the same slots."""
        wb = self.b.wiring
        found: set[int] | None = None
        for c, slot, _k in self.a.wiring.readers[i]:
            q = self.a_to_b[c]
            if q >= 0 and slot < len(wb.sources[q]):
                p = wb.sources[q][slot][0]
                near = {p} if p >= 0 and self.b_to_a[p] < 0 else set()
                found = near if found is None else found & near
        return found


def _groups(keys: Sequence[int], matched: Sequence[int], order: Sequence[int]
            ) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = defaultdict(list)
    for i in order:
        if matched[i] < 0:
            groups[keys[i]].append(i)
    return groups


def match_nodes(a: Graph, b: Graph) -> list[int]:
    """For each node index of ``a``, the index of its counterpart in ``b`` or -1."""
    matcher = Matcher(a, b)
    pairing = matcher.run()
    # freed piece by piece: dropped at once on return, dag100k's wiring and fingerprints
    # went in one chain of deallocations that held the GIL 60 ms (the window froze)
    dismantle(matcher.a.wiring, matcher.b.wiring, matcher.a, matcher.b)
    return pairing
