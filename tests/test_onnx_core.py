"""onnx_core: onnx's protobuf classes and C++ core without the onnx package's own
import, shared with the package once something imports it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.model import onnx_core
from onnxstudio.model.typeproto import initializer_info, tensor_summary
from tests.builders import relu_chain, save, tiny_mlp

REPO = Path(__file__).resolve().parents[1]


def _python(code: str, *args: str) -> str:
    """stdout of ``code`` run by a fresh interpreter in the repository."""
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False,
                          env={**__import__("os").environ, "ONNXSTUDIO_NO_LAYOUT_CACHE": "1"})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_an_svg_export_from_the_shell_never_imports_the_onnx_package(tmp_path: Path) -> None:
    model = save(tiny_mlp(), tmp_path / "mlp.onnx")
    out = tmp_path / "mlp.svg"
    loaded = _python(
        "import sys; from onnxstudio.cli import main; code = main(sys.argv[1:]); "
        "print(code, 'onnx.onnx_ml_pb2' in sys.modules, sorted(m for m in sys.modules "
        "if m.split('.')[0] == 'onnx' and not m.startswith(('onnx.onnx_ml_pb2', "
        "'onnx.onnx_cpp2py_export'))))",
        "export", str(model), str(out))
    # the two pieces onnx_core loads (with the extension's own submodules), nothing else
    assert loaded == "0 True []"
    text = out.read_text()
    assert "MatMul" in text and "batch×8" in text  # inferred shapes reached the drawing


def test_onnx_imported_afterwards_shares_the_loaded_classes() -> None:
    same = _python(
        "from onnxstudio.model import onnx_core; import onnx, onnx.shape_inference; "
        "from tests.builders import relu_chain; "
        "m = onnx.shape_inference.infer_shapes(relu_chain(3)); "
        "print(onnx.ModelProto is onnx_core.ModelProto, "
        "onnx.defs.get_schema('Relu', 14, '').since_version, len(m.graph.value_info))")
    assert same == "True 14 2"


def test_shape_inference_gives_what_onnx_gives() -> None:
    for model in (relu_chain(4), tiny_mlp()):
        ours = onnx_core.infer_shapes(model, check_type=True, strict_mode=True)
        theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        assert ours.SerializeToString() == theirs.SerializeToString()
        assert len(ours.graph.value_info) > 0


def test_a_broken_graph_fails_inference_as_onnx_does() -> None:
    model = tiny_mlp()
    model.graph.node[0].input[0] = "nowhere"
    with pytest.raises(Exception) as ours:
        onnx_core.infer_shapes(model, check_type=True, strict_mode=True)
    with pytest.raises(Exception) as theirs:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    assert type(ours.value) is type(theirs.value)


@pytest.mark.parametrize("data_type", [
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32,
    TensorProto.INT16, TensorProto.INT8, TensorProto.UINT16, TensorProto.UINT8,
    TensorProto.BOOL, TensorProto.UINT32, TensorProto.UINT64, TensorProto.FLOAT16])
@pytest.mark.parametrize("raw", [False, True])
def test_small_tensor_previews_match_numpy_helper(data_type: int, raw: bool) -> None:
    """The values a Constant's summary shows, read without numpy_helper for plain
    numeric types (float16 goes to numpy_helper), are numpy_helper's to the last digit."""
    dtype = helper.tensor_dtype_to_np_dtype(data_type)
    values = (np.arange(12) * 7 - 30).astype(np.float64) / 3
    tensor = numpy_helper.from_array(values.astype(dtype).reshape(3, 4), "t") if raw \
        else helper.make_tensor("t", data_type, [3, 4], values.astype(dtype).ravel())
    assert bool(tensor.raw_data) == raw
    _assert_preview_as_numpy_helper(tensor)


def test_string_tensor_previews_come_from_numpy_helper() -> None:
    _assert_preview_as_numpy_helper(helper.make_tensor("t", TensorProto.STRING, [3],
                                                       [b"a", b"bc", b""]))


def _assert_preview_as_numpy_helper(tensor: onnx.TensorProto) -> None:
    expected = np.asarray(numpy_helper.to_array(tensor)).ravel()
    text = ", ".join(str(x) for x in expected[:8].tolist())
    summary = tensor_summary(tensor)
    assert summary.preview == f"[{text}{', …' if expected.size > 8 else ''}]"
    assert summary.shape == initializer_info(tensor).shape


def test_a_tensor_whose_size_contradicts_its_shape_has_no_preview() -> None:
    tensor = numpy_helper.from_array(np.arange(6, dtype=np.float32), "t")
    tensor.dims[:] = [2, 4]
    assert tensor_summary(tensor).preview == ""


def _changed_signature(*args: object) -> bytes:
    """What pybind11 raises when onnx's C++ infer_shapes takes other arguments."""
    raise TypeError("infer_shapes(): incompatible function arguments")


@pytest.mark.parametrize("private", [_changed_signature, None],
                         ids=["changed-signature", "missing"])
def test_without_the_private_c_inference_shapes_still_arrive(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private: object) -> None:
    """Another onnx release changing its C++ extension must cost speed, not shapes: the
    public onnx.shape_inference answers, errors included."""
    from onnxstudio.model.open import load_model

    good = save(relu_chain(30), tmp_path / "good.onnx")
    bad = save(relu_chain(30, bad=True), tmp_path / "bad.onnx")
    direct = [load_model(good), load_model(bad)]
    public = onnx.shape_inference.infer_shapes
    calls: list[bool] = []
    monkeypatch.setattr(onnx_core, "_private_infer_shapes", lambda: private)
    monkeypatch.setattr(onnx.shape_inference, "infer_shapes",
                        lambda *a, **k: calls.append(True) or public(*a, **k))
    fallen = [load_model(good), load_model(bad)]
    assert calls, "the public API was not used"
    assert fallen[0].graph.values["v7"].type.describe() == "float32[2×8]"
    assert not fallen[0].warnings
    assert fallen[1].warnings == direct[1].warnings
    assert any("shape inference failed" in w for w in fallen[1].warnings)
    assert fallen[1].graph.values["v7"].type.describe() == "float32[2×8]"


def test_without_onnx_files_where_expected_the_package_serves_it_all() -> None:
    """If onnx's folder cannot be found, onnx_core is plain ``import onnx``: the same
    classes, schemas and inference, from the public modules."""
    out = _python(
        "import importlib.util; real = importlib.util.find_spec; "
        "importlib.util.find_spec = lambda n, *a: None if n == 'onnx' else real(n, *a); "
        "from onnxstudio.model import onnx_core; import onnx, onnx.defs; "
        "from tests.builders import tiny_mlp; "
        "m = onnx_core.infer_shapes(tiny_mlp(), check_type=True, strict_mode=True); "
        "print(onnx_core.defs is onnx.defs, onnx_core.ModelProto is onnx.ModelProto, "
        "onnx_core.defs.get_schema('Relu', 14, '').since_version, len(m.graph.value_info) > 0)")
    assert out == "True True 14 True"


def test_our_tensor_walk_covers_what_onnx_private_walk_finds() -> None:
    """Saving, checking and converting find external weights through external.tensors_of,
    not onnx's private _get_all_tensors; it must miss none of them (subgraphs included)."""
    from onnx import external_data_helper

    from onnxstudio.model.external import tensors_of

    private = getattr(external_data_helper, "_get_all_tensors", None)
    if private is None:
        pytest.skip("this onnx has no _get_all_tensors to compare with")
    const = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(
        np.ones(3, np.float32), "cval"))
    branch = helper.make_graph(
        [helper.make_node("Add", ["c", "w_in_branch"], ["o"])], "branch", [],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, [3])],
        [numpy_helper.from_array(np.zeros(3, np.float32), "w_in_branch")])
    model = tiny_mlp()
    model.graph.node.extend([const, helper.make_node(
        "If", ["cond"], ["o"], then_branch=branch, else_branch=branch)])
    theirs = [t.name for t in private(model)]
    ours = [t.name for t in tensors_of(model)]
    assert len(theirs) >= 6 and sorted(theirs) == sorted(ours)
