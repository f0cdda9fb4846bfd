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
import os
import shutil
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx
from onnx import external_data_helper

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

_PIECE = 16 * 2**20


def _load(path: Path) -> onnx.ModelProto:
    """The checked proto with its weights read in (the one loader refuses hostile paths)."""
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


@dataclass(frozen=True)
class Merged:
    """A merged model whose large weights still lie in its sources' data files: tensor
    name -> the folder its external data location is relative to."""

    proto: onnx.ModelProto
    sources: dict[str, Path]


def merge_stages(folder: str | Path) -> Merged:
    """One model from a split's ``manifest.json`` and stages, computing what they chain;
    the stages' weights are not read (they are copied file to file when written)."""
    folder = Path(folder).expanduser()
    manifest = _manifest(folder)
    stages = [read_model_proto(folder / stage["file"])[0] for stage in manifest["stages"]]
    made: set[str] = set()
    sources: dict[str, Path] = {}
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
        for tensor in g.initializer:
            if tensor.name not in weights:
                weights[tensor.name] = tensor
                if external_data_helper.uses_external_data(tensor):
                    sources[tensor.name] = folder  # stages' data lies beside them
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
    return Merged(merged, sources)


def _pairs(connect: Sequence[str]) -> list[tuple[str, str]]:
    pairs = []
    for item in connect:
        out, eq, into = item.partition("=")
        if not eq or not out or not into:
            raise CutError(f"--connect {item}: expected A_OUTPUT=B_INPUT")
        pairs.append((out, into))
    return pairs


def merge_two(a_path: str | Path, b_path: str | Path, connect: Sequence[str]
              ) -> tuple[Merged, str | None]:
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
    return Merged(merged, {}), note


def _copy_weights(merged: Merged, data: Path) -> None:
    """Append every external weight's bytes to ``data``, in pieces, and point its tensor
    there: peak memory is one piece, not the model (the 2.3 GB Llama's stages merged at
    6.6 GB when read whole)."""
    with data.open("wb") as out:
        for tensor in merged.proto.graph.initializer:
            folder = merged.sources.get(tensor.name)
            if folder is None:
                continue
            info = external_data_helper.ExternalDataInfo(tensor)
            offset = out.tell()
            with (folder / info.location).open("rb") as source:
                source.seek(info.offset or 0)
                left = info.length if info.length is not None else -1
                while left:
                    piece = source.read(_PIECE if left < 0 else min(_PIECE, left))
                    if not piece:
                        break
                    out.write(piece)
                    left -= len(piece) if left > 0 else 0
            del tensor.external_data[:]
            for key, value in (("location", data.name), ("offset", str(offset)),
                               ("length", str(out.tell() - offset))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value


def write_merged(merged: Merged, dest: str | Path,
                 protect: Sequence[str | Path]) -> Path | None:
    """Write the merged model to a new file (weights in ``DEST.data`` when large)."""
    dest = Path(dest).expanduser()
    check_destination(dest, [Path(p) for p in protect], CutError)

    def check(path: Path) -> None:
        check_model_file(path, CutError, "the merged model")

    if not merged.sources:
        total = sum(t.ByteSize() for t in merged.proto.graph.initializer)
        external = total > EXTERNAL_THRESHOLD or total > PROTOBUF_SAFE
        return write_model_file(merged.proto, dest, external=external, error=CutError,
                                check=check)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.stem}.tmp-", dir=dest.parent))
    data = dest.with_name(f"{dest.name}.data")
    try:
        _copy_weights(merged, staging / data.name)
        (staging / dest.name).write_bytes(merged.proto.SerializeToString())
        os.chmod(staging / data.name, stat.S_IMODE(os.stat(staging / dest.name).st_mode))
        check(staging / dest.name)
        os.replace(staging / data.name, data)
        os.replace(staging / dest.name, dest)
    except OSError as exc:
        raise CutError(f"{dest}: could not be written ({exc.strerror or exc})") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return data
