"""Seeded mutations of real models, and the verdict on what the CLI made of each.

A case is (seed model, mutation, seed): reproducible from its number alone. Mutations
work on bytes (flips, truncation) or on the parsed proto (missing inputs, dangling
names, cycles, absurd dims, opsets, IR versions, wrong types, hostile names, bogus
external data, deep nesting). The verdict accepts success with parseable output, or
exactly one clean line on stderr and a non-zero exit; anything else is a finding.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import onnx

from tests.hostile import CliResult, deep_model, external

Mutation = Callable[[random.Random, onnx.ModelProto], str]

HOSTILE_NAMES = ["", "a\x01b", "\x1b[31mred\x1b[0m", "../../etc/passwd", "%s%n{0}", "<g>&\"'",
                 "x" * 20000, "名前/スコープ/ノード", "\u202eevil", "a\nb\r\nc", "\ud7ff\ufffe"]
HOSTILE_LOCATIONS = ["../secret.bin", "/etc/passwd", "", "w.bin\x00../x", "missing.bin",
                     "*/_ORT_MEM_ADDR_/*", "/dev/zero", "w.bin", "sub/../../w.bin", "."]
NUMBERS = ["abc", "-1", "1e3", "99999999999999999999", "0", "12", " 4", "0x10", ""]


def _pick_node(rng: random.Random, proto: onnx.ModelProto) -> onnx.NodeProto | None:
    nodes = proto.graph.node
    return nodes[rng.randrange(len(nodes))] if len(nodes) else None


def drop_input(rng: random.Random, proto: onnx.ModelProto) -> str:
    if not proto.graph.input:
        return "drop_input (none)"
    i = rng.randrange(len(proto.graph.input))
    name = proto.graph.input[i].name
    del proto.graph.input[i]
    return f"drop_input {name!r}"


def dangling_name(rng: random.Random, proto: onnx.ModelProto) -> str:
    node = _pick_node(rng, proto)
    if node is None or not node.input:
        proto.graph.output.add().name = "nowhere"
        return "dangling graph output"
    node.input[rng.randrange(len(node.input))] = "never_produced"
    return f"dangling input of {node.op_type}"


def cycle(rng: random.Random, proto: onnx.ModelProto) -> str:
    nodes = proto.graph.node
    if len(nodes) < 2 or not nodes[0].input or not nodes[-1].output:
        return "cycle (too small)"
    nodes[0].input[0] = nodes[-1].output[0]
    return "cycle last->first"


def absurd_dim(rng: random.Random, proto: onnx.ModelProto) -> str:
    values = list(proto.graph.input) + list(proto.graph.output) + list(proto.graph.value_info)
    dims = [d for v in values for d in v.type.tensor_type.shape.dim]
    value = rng.choice([2**40, 2**63 - 1, -1, -(2**63), 0, 10**12])
    if dims:
        rng.choice(dims).dim_value = value
    if proto.graph.initializer:
        tensor = rng.choice(proto.graph.initializer)
        if tensor.dims:
            tensor.dims[rng.randrange(len(tensor.dims))] = value
    return f"absurd dim {value}"


def opset(rng: random.Random, proto: onnx.ModelProto) -> str:
    value = rng.choice([0, -1, 2**31, 2**31 - 1, 2**63 - 1, 10**6, 1])
    if proto.opset_import:
        rng.choice(proto.opset_import).version = value
    if rng.random() < 0.3:
        proto.opset_import.add(domain=rng.choice(["", "com.evil", "ai.onnx.ml"]), version=value)
    return f"opset {value}"


def ir_version(rng: random.Random, proto: onnx.ModelProto) -> str:
    proto.ir_version = rng.choice([0, -1, 1, 3, 99, 2**40, 2**63 - 1])
    return f"ir_version {proto.ir_version}"


def wrong_type(rng: random.Random, proto: onnx.ModelProto) -> str:
    elem = rng.choice([0, 8, 13, 99, 1000, -5])
    values = list(proto.graph.input) + list(proto.graph.output)
    if values:
        rng.choice(values).type.tensor_type.elem_type = elem
    if proto.graph.initializer:
        rng.choice(proto.graph.initializer).data_type = elem
    node = _pick_node(rng, proto)
    if node is not None and node.attribute:
        attr = rng.choice(node.attribute)
        attr.type = rng.choice([0, 1, 2, 3, 4, 5, 14])
    return f"wrong type {elem}"


def hostile_name(rng: random.Random, proto: onnx.ModelProto) -> str:
    name = rng.choice(HOSTILE_NAMES)
    node = _pick_node(rng, proto)
    if node is not None:
        node.name = name
        if node.output and rng.random() < 0.5:
            old = node.output[0]
            node.output[0] = name
            for other in proto.graph.node:
                for i, used in enumerate(other.input):
                    if used == old:
                        other.input[i] = name
    if proto.graph.input and rng.random() < 0.5:
        proto.graph.input[0].type.tensor_type.shape.dim.add().dim_param = name
    proto.producer_name = name
    proto.metadata_props.add(key=name, value=name)
    return f"hostile name {name[:20]!r}"


def bogus_external(rng: random.Random, proto: onnx.ModelProto) -> str:
    if not proto.graph.initializer:
        return "bogus external (no initializer)"
    tensor = rng.choice(proto.graph.initializer)
    info = {k: rng.choice(NUMBERS) for k in ("offset", "length") if rng.random() < 0.7}
    location = rng.choice(HOSTILE_LOCATIONS)
    del tensor.external_data[:]
    external(tensor, location, **info)
    return f"bogus external {location!r} {info}"


PROTO_MUTATIONS: list[Mutation] = [drop_input, dangling_name, cycle, absurd_dim, opset,
                                   ir_version, wrong_type, hostile_name, bogus_external]


def mutate(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One mutated model file from ``data``, and what was done to it."""
    kind = rng.random()
    if kind < 0.2:
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        return bytes(flipped), "byte flips"
    if kind < 0.3:
        cut = rng.randrange(1, len(data))
        return data[:cut], f"truncated at {cut}"
    if kind < 0.33:
        levels = rng.choice([30, 34, 40, 200])
        return deep_model(levels), f"deep nesting {levels}"
    proto = onnx.ModelProto.FromString(data)
    done = [m(rng, proto) for m in rng.sample(PROTO_MUTATIONS, rng.randint(1, 3))]
    mutated = proto.SerializeToString()
    if rng.random() < 0.15:  # invalid UTF-8 in a name
        names = [n.name.encode() for n in proto.graph.node if n.name.isascii() and n.name]
        if names:
            name = rng.choice(names)
            mutated = mutated.replace(name, name[:-1] + b"\xff", 1)
            done.append("invalid utf-8 name")
    return mutated, ", ".join(done)


@dataclass
class Verdict:
    outcome: str  # "ok", "refused" or "finding"
    detail: str = ""


def judge(result: CliResult, parse: Callable[[str], object] | None = None) -> Verdict:
    """Success with parseable output, or one clean line and a non-zero exit."""
    lines = result.err.splitlines()
    if result.code == 0:
        try:
            if parse is not None:
                parse(result.out)
        except Exception as exc:
            return Verdict("finding", f"unparseable output ({type(exc).__name__}: {exc})")
        return Verdict("ok")
    if len(lines) != 1 or not lines[0].startswith("onnxstudio: "):
        return Verdict("finding", f"exit {result.code}, stderr {result.err[-400:]!r}")
    if "internal error" in lines[0] or "Traceback" in result.err:
        return Verdict("finding", lines[0][:400])
    return Verdict("refused", lines[0])


def parse_export(path: Path) -> None:
    """The exported file must parse as what its extension says."""
    if path.suffix == ".svg":
        ElementTree.parse(path)
    elif path.suffix == ".json":
        json.loads(path.read_text(encoding="utf-8"))
    elif path.suffix == ".dot":
        text = path.read_text(encoding="utf-8")
        if any(ord(c) < 0x20 and c not in "\t\n" for c in text):
            raise ValueError("control character in DOT")
        if not text.startswith("digraph") or not text.rstrip().endswith("}"):
            raise ValueError("not a DOT digraph")
