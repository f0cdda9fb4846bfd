"""Which model nodes a kernel of the optimised graph stands for.

With optimisations on, onnxruntime's kernels are the nodes of the graph it really runs,
named by its optimisers (``InsertedPrecisionFreeCast_r21_nchwc``, ``ReorderOutput_token_4``,
``gemm_input_reshape_token_433``, ``.../MatMulScaleFusion/``). Names alone cannot place
them, but tensors can: every kernel sits between tensors of the model. From a kernel we
walk forward through tensors the optimisers made until we reach tensors of the model, then
back through the model from their producers across tensors the optimised graph no longer
has; the nodes met on the way are the ones the kernel (with its casts, reorders and
reshapes) replaced. A fused Conv+BatchNormalization+Relu, an Attention over twenty nodes
or a cast inserted around a float16 Conv is thereby credited to the model's own nodes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

import onnx

_MAX_WALK = 64  # nodes one kernel may stand for (an Attention fusion covers ~25)
# The ops whose kernel a fused set is named after first, when the kernel's own op type is
# not in the set (FusedMatMul, FusedConv, QLinearConv, Attention, SkipLayerNormalization...).
_HEAVY = ("Conv", "ConvTranspose", "MatMul", "Gemm", "MatMulInteger", "ConvInteger",
          "QLinearConv", "QLinearMatMul", "LayerNormalization", "Softmax", "Attention")


Placement = tuple[int, list[int]]  # node credited, other nodes the kernel covers
_CAST = "InsertedPrecisionFreeCast_"  # float32 copy of a float16 tensor (or node) of the model


class OptimisedMap:
    """Kernel name -> model nodes it replaced (main graph indices), from both graphs."""

    def __init__(self, original: onnx.GraphProto, optimised: onnx.GraphProto,
                 by_name: Callable[[str, str], Placement | None]) -> None:
        """``by_name``: where a kernel's name alone places it (kernel, op) -> placement;
        a named kernel keeps its node, the tensors add what it covers."""
        self.by_name = by_name
        self.nodes = list(original.node)
        self.producer = {o: i for i, n in enumerate(self.nodes) for o in n.output if o}
        self.model_tensors = set(self.producer) | {v.name for v in original.input} \
            | {t.name for t in original.initializer}
        self.constant = _constant_nodes(original)
        self.kernels = {n.name: n for n in optimised.node if n.name}
        self.unnamed: dict[str, list[onnx.NodeProto]] = {}  # inlined functions' nodes
        for n in optimised.node:
            if not n.name:
                self.unnamed.setdefault(n.op_type, []).append(n)
        self.live = {self._model(o) or o for n in optimised.node for o in n.output if o} \
            | {v.name for v in optimised.input} | {t.name for t in optimised.initializer}
        self.consumers: dict[str, list[onnx.NodeProto]] = {}
        for n in optimised.node:
            for x in n.input:
                if x:
                    self.consumers.setdefault(x, []).append(n)
        self._claims: dict[int, str] | None = None  # model node -> kernel named after it

    def place(self, kernel: str, op: str) -> Placement | None:
        """(node credited, other nodes the kernel covers), or None when neither the tensors
        around the kernel nor its name lead to a model node."""
        named = self.by_name(kernel, op)
        node = self._kernel(kernel, op)
        if node is None:
            return named
        if named is not None and not named[1] and list(node.output) == \
                list(self.nodes[named[0]].output):
            return named  # the model's own node, run as it is
        reached, joins = self._model_outputs(node)
        claims = self._claimed()
        for t in reached:  # a reorder or cast after a kernel named after the same node
            owner = claims.get(self.producer.get(t, -1))
            if owner is not None and owner != kernel and named is None:
                return self.place(owner, self.kernels[owner].op_type)
        covered = self._replaced(reached, kernel)
        if named is not None:
            extra = [i for i in covered if i != named[0] and i not in named[1]]
            return named[0], sorted(named[1] + extra)
        if covered:
            return _owner(covered, [self.nodes[i].op_type for i in covered], op)
        if joins is not None:  # a reorder or cast before a named kernel
            return self.place(joins.name, joins.op_type)
        return None

    def _kernel(self, kernel: str, op: str) -> onnx.NodeProto | None:
        """The optimised node of a kernel; onnxruntime calls an unnamed one ``<op>_<n>``,
        which is only certain when one unnamed node has that op."""
        node = self.kernels.get(kernel)
        if node is None and kernel.startswith(f"{op}_") and len(self.unnamed.get(op, ())) == 1:
            node = self.unnamed[op][0]
        return node

    def _model(self, tensor: str) -> str | None:
        """The model tensor ``tensor`` is (or is a float32 copy of), else None."""
        if tensor in self.model_tensors:
            return tensor
        if tensor.startswith(_CAST) and tensor[len(_CAST):] in self.model_tensors:
            return tensor[len(_CAST):]
        return None

    def _claimed(self) -> dict[int, str]:
        """Model nodes kernels are named after (with what those names cover)."""
        if self._claims is None:
            self._claims = {}
            for name, n in self.kernels.items():
                hit = self.by_name(name, n.op_type)
                if hit is not None:
                    for i in [hit[0], *hit[1]]:
                        self._claims.setdefault(i, name)
        return self._claims

    def _model_outputs(self, node: onnx.NodeProto) -> tuple[list[str], onnx.NodeProto | None]:
        """Model tensors the kernel's outputs become, through tensors onnxruntime made,
        stopping at kernels named after model nodes (the first such is returned too)."""
        found: list[str] = []
        joins: onnx.NodeProto | None = None
        queue = deque(o for o in node.output if o)
        seen: set[str] = set()
        while queue and len(seen) < _MAX_WALK:
            t = queue.popleft()
            if t in seen:
                continue
            seen.add(t)
            model = self._model(t)
            if model is not None:
                found.append(model)
                continue
            for consumer in self.consumers.get(t, ()):
                if consumer.name and self.by_name(consumer.name, consumer.op_type):
                    joins = joins or consumer
                    continue
                queue.extend(o for o in consumer.output if o)
        return found, joins

    def _replaced(self, outputs: Iterable[str], kernel: str) -> list[int]:
        """Model nodes producing ``outputs`` and, upstream, those whose outputs the
        optimised graph dropped (fused away) and no other kernel is named after; nodes of
        weights alone (a float16 weight's Cast) were folded before any run, not fused."""
        claims = self._claimed()
        covered: list[int] = []
        queue = deque(self.producer[t] for t in outputs if t in self.producer)
        seen: set[int] = set()
        while queue and len(covered) < _MAX_WALK:
            i = queue.popleft()
            if i in seen or claims.get(i, kernel) != kernel or i in self.constant:
                continue
            seen.add(i)
            covered.append(i)
            for x in self.nodes[i].input:
                if x and x not in self.live and x in self.producer:
                    queue.append(self.producer[x])
        return sorted(covered)


def _owner(covered: list[int], ops: list[str], kernel_op: str) -> Placement:
    """The node a set is listed under: the kernel's own op, else the one its name holds
    (FusedMatMul: MatMul), else the heaviest kind of op, else the last node."""
    def pick() -> int:
        for k, op in enumerate(ops):
            if op == kernel_op:
                return k
        named = [k for k, op in enumerate(ops) if op in kernel_op]  # "Mul" is in "MatMul"
        if named:
            return max(named, key=lambda k: len(ops[k]))
        for heavy in _HEAVY:
            if heavy in ops:
                return ops.index(heavy)
        return len(ops) - 1
    k = pick()
    return covered[k], [i for j, i in enumerate(covered) if j != k]


def _constant_nodes(graph: onnx.GraphProto) -> set[int]:
    """Main-graph nodes that read only weights and other such nodes (in file order)."""
    constant_values = {t.name for t in graph.initializer}
    found: set[int] = set()
    for i, n in enumerate(graph.node):
        if all(not x or x in constant_values for x in n.input):
            found.add(i)
            constant_values.update(o for o in n.output if o)
    return found
