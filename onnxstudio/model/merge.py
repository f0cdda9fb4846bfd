"""Stitch models back together: a split's stages into one model, or two models into one.

Stages written by :mod:`onnxstudio.model.split_write` keep the original's tensor names and
each carries its own copy of the constants and cheap chains it needs, so rebuilding the
model is a union in stage order: a node whose outputs an earlier stage already makes is a
carried copy and is dropped, weights are kept once. Joining two unrelated models is
onnx.compose.merge_models' job; we only name clashes apart and write the result as every
other new file is written (atomically, never over an input, weights beside it when large).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import onnx

from onnxstudio.errors import CutError
from onnxstudio.model.external import model_folder
from onnxstudio.model.load import read_model_proto
from onnxstudio.model.write import (
    EXTERNAL_THRESHOLD,
    PROTOBUF_SAFE,
    check_destination,
    check_model_file,
    write_model_file,
)


def _load(path: Path) -> onnx.ModelProto:
    """The checked proto with its weights read in (the one loader refuses hostile paths)."""
    from onnx import external_data_helper

    proto, external = read_model_proto(path)
    if external:
        try:
            external_data_helper.load_external_data_for_model(proto, str(model_folder(path)))
        except (OSError, ValueError) as exc:
            raise CutError(f"{path.name}: cannot read its weights ({exc})") from exc
    return proto


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / "manifest.json"
    try:
        manifest = json.loads(path.read_text())
        manifest["stages"][0]["file"]
    except FileNotFoundError as exc:
        raise CutError(f"{folder}: no manifest.json (is this a folder `split` wrote?)"
                       ) from exc
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise CutError(f"{path}: not a split manifest ({exc})") from exc
    return manifest


def _opsets(protos: Sequence[onnx.ModelProto]) -> list[onnx.OperatorSetIdProto]:
    versions: dict[str, int] = {}
    for proto in protos:
        for opset in proto.opset_import:
            versions[opset.domain] = max(versions.get(opset.domain, 0), opset.version)
    return [onnx.helper.make_opsetid(d, v) for d, v in versions.items()]


def merge_stages(folder: str | Path) -> onnx.ModelProto:
    """One model from a split's ``manifest.json`` and stages, computing what they chain."""
    folder = Path(folder).expanduser()
    manifest = _manifest(folder)
    stages = [_load(folder / stage["file"]) for stage in manifest["stages"]]
    made: set[str] = set()
    nodes: list[onnx.NodeProto] = []
    weights: dict[str, onnx.TensorProto] = {}
    infos: dict[str, onnx.ValueInfoProto] = {}
    inputs: dict[str, onnx.ValueInfoProto] = {}
    outputs: dict[str, onnx.ValueInfoProto] = {}
    functions: dict[tuple[str, str], onnx.FunctionProto] = {}
    for spec, proto in zip(manifest["stages"], stages, strict=True):
        g = proto.graph
        fed = {i["name"] for i in spec["inputs"] if i["from"] == "model"}
        inputs.update({vi.name: vi for vi in g.input if vi.name in fed})
        for node in g.node:
            if all(o in made for o in node.output if o):
                continue  # a constant or cheap chain an earlier stage already computes
            nodes.append(node)
            made.update(o for o in node.output if o)
        weights.update({t.name: t for t in g.initializer if t.name not in weights})
        infos.update({vi.name: vi for vi in (*g.value_info, *g.input, *g.output)})
        outputs.update({vi.name: vi for vi in g.output})
        functions.update({(f.domain, f.name): f for f in proto.functions})
    handed = {i["name"] for s in manifest["stages"] for i in s["inputs"] if i["from"] != "model"}
    wanted = manifest.get("model_outputs") or [n for n in outputs if n not in handed]
    order = manifest.get("model_inputs") or list(inputs)
    first = stages[0]
    graph = onnx.helper.make_graph(
        nodes, first.graph.name.removesuffix("_cut") or "merged",
        [inputs[n] for n in order if n in inputs], [outputs[n] for n in wanted],
        initializer=list(weights.values()),
        value_info=[vi for name, vi in infos.items() if name not in inputs
                    and name not in wanted and name not in weights])
    merged = onnx.helper.make_model(graph, opset_imports=_opsets(stages),
                                    producer_name=first.producer_name,
                                    producer_version=first.producer_version)
    merged.ir_version = max(p.ir_version for p in stages)
    merged.functions.extend(functions.values())
    props = {p.key: p.value for p in first.metadata_props if p.key != "onnxstudio.cut_from"}
    onnx.helper.set_model_props(merged, {**props, "onnxstudio.merged_from": folder.name})
    return merged


def _pairs(connect: Sequence[str]) -> list[tuple[str, str]]:
    pairs = []
    for item in connect:
        out, eq, into = item.partition("=")
        if not eq or not out or not into:
            raise CutError(f"--connect {item}: expected A_OUTPUT=B_INPUT")
        pairs.append((out, into))
    return pairs


def merge_two(a_path: str | Path, b_path: str | Path, connect: Sequence[str]
              ) -> tuple[onnx.ModelProto, str | None]:
    """A then B, B's inputs named in ``connect`` (``A_OUT=B_IN``) fed by A's outputs.
    Returns the model and, when B's names had to be prefixed to keep them apart, a note."""
    from onnx import compose

    a_path, b_path = Path(a_path), Path(b_path)
    a, b = _load(a_path), _load(b_path)
    pairs = _pairs(connect)
    a_outs = {o.name for o in a.graph.output}
    b_ins = {i.name for i in b.graph.input}
    for out, into in pairs:
        if out not in a_outs:
            raise CutError(f"--connect {out}={into}: {a_path.name} has no output '{out}'")
        if into not in b_ins:
            raise CutError(f"--connect {out}={into}: {b_path.name} has no input '{into}'")
    for model in (a, b):  # merge_models wants one IR version and one opset per domain
        model.ir_version = max(a.ir_version, b.ir_version)
        opsets = _opsets([a, b])
        del model.opset_import[:]
        model.opset_import.extend(opsets)
    clashes = compose.check_overlapping_names(a.graph, b.graph, pairs)
    prefix = f"{b_path.stem}/" if clashes else None
    try:
        merged = compose.merge_models(a, b, pairs, prefix2=prefix)
    except (ValueError, onnx.checker.ValidationError) as exc:
        raise CutError(f"{a_path.name} + {b_path.name}: cannot be joined ({exc})") from exc
    note = (f"names of {b_path.name} clashed with {a_path.name}'s; they are prefixed "
            f"'{prefix}'") if prefix else None
    return merged, note


def write_merged(proto: onnx.ModelProto, dest: str | Path,
                 protect: Sequence[str | Path]) -> Path | None:
    """Write the merged model to a new file (weights in ``DEST.data`` when large)."""
    dest = Path(dest).expanduser()
    check_destination(dest, [Path(p) for p in protect], CutError)
    total = sum(t.ByteSize() for t in proto.graph.initializer)
    external = total > EXTERNAL_THRESHOLD or total > PROTOBUF_SAFE
    return write_model_file(proto, dest, external=external, error=CutError,
                            check=lambda p: check_model_file(p, CutError, "the merged model"))
