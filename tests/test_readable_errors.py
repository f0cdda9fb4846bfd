"""onnxruntime's and onnx's failures as one readable line (operator and node named, no C++
signature, placeholders filled), with the whole text behind the banner's Details."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.cli import main
from onnxstudio.errors import details_for
from onnxstudio.readable import onnx_message, ort_message
from tests.builders import make_model, save


def _conv_integer(path: Path, name: str = "") -> Path:
    """ConvInteger with a per-channel weight zero point, which onnxruntime's CPU kernel
    refuses at run time (with its C++ signature in the message)."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["f"], ["r"], name="first"),
         helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], name=name)], "ci",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 1, 3, 3]),
         helper.make_tensor_value_info("f", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, [1])],
        initializer=[numpy_helper.from_array(np.ones((2, 1, 1, 1), np.uint8), "w"),
                     numpy_helper.from_array(np.array(1, np.uint8), "xz"),
                     numpy_helper.from_array(np.array([1, 2], np.uint8), "wz")])
    return save(make_model(graph), path)


def test_an_onnxruntime_kernel_failure_is_one_line_naming_op_and_node(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _conv_integer(tmp_path / "ci.onnx")
    assert main(["run", str(model), "--zeros"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("onnxstudio: ci.onnx: onnxruntime failed while running: ConvInteger node "
                   "#1 (unnamed): IsScalarOr1ElementVector(W_Zero_Point) was false. Non "
                   "per-tensor quantization is not supported now.")
    full = details_for(err)
    assert "onnxruntime::ConvInteger::Compute(onnxruntime::OpKernelContext*)" in full
    assert "conv_integer.cc:" in full


def test_a_named_node_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _conv_integer(tmp_path / "ci.onnx", name="/stem/conv")
    assert main(["run", str(model), "--zeros"]) == 2
    assert "ConvInteger node '/stem/conv': IsScalar" in capsys.readouterr().err


@pytest.mark.parametrize(("raw", "line"), [
    ("[ONNXRuntimeError] : 1 : FAIL : Exception during initialization: /onnxruntime_src/"
     "onnxruntime/core/providers/cpu/text/string_normalizer.cc:235 onnxruntime::"
     "StringNormalizer::Locale::Locale(const std::string&)::<lambda()> Failed to construct "
     "locale with name:en_US.UTF-8",
     "StringNormalizer: Failed to construct locale with name:en_US.UTF-8"),
    ("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for "
     "ImageDecoder(20) node with name ''",
     "ImageDecoder node #0 (unnamed): onnxruntime has no ImageDecoder (opset 20) kernel for "
     "these input types on this provider"),
])
def test_onnxruntime_texts_from_the_node_tests(raw: str, line: str) -> None:
    """Texts onnxruntime 1.32 wrote for onnx's node tests (test_strnorm_*,
    test_image_decoder_*) in ../shared/models."""
    assert ort_message(raw, lambda: [("ImageDecoder", "")]) == line


def test_onnx_converter_placeholders_are_filled(tmp_path: Path) -> None:
    from onnxstudio.model.convert import ConversionError, convert_opset

    graph = helper.make_graph(
        [helper.make_node("Frobnicate", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = make_model(graph, opset=13)
    onnx.save(model, tmp_path / "custom.onnx")
    with pytest.raises(ConversionError) as caught:
        convert_opset(tmp_path / "custom.onnx", 17, tmp_path / "out.onnx")
    text = str(caught.value)
    assert text == ("cannot convert custom.onnx from opset 13 to 17: Op 'Frobnicate' has no "
                    "registered schema; cannot convert it from version 13 to 17.")
    assert "%s" not in text and "Assertion" not in text
    assert "%lld" in details_for(text)


def test_onnx_assertions_lose_location_and_dollar_opsets() -> None:
    raw = ("/project/onnx/version_converter/BaseConverter.h:66: adapter_lookup: Assertion "
           "`false` failed: No Adapter From Version $16 for Loop")
    assert onnx_message(raw) == "No Adapter From Version 16 for Loop"
    unfillable = "Op '%s' wants %lld inputs.Foo3"
    assert onnx_message(unfillable) == "Op wants inputs. (Foo3)"


def test_the_run_panel_banner_shows_one_line_and_details(qtbot, tmp_path: Path) -> None:
    from onnxstudio.ui.insight.run_panel import RunPanel

    model = _conv_integer(tmp_path / "ci.onnx")
    panel = RunPanel()
    qtbot.addWidget(panel)
    panel.resize(420, 700)
    panel.show()
    panel.set_model(model)
    with qtbot.waitSignal(panel.runFailed, timeout=30000):
        panel.run_random(zeros=True)
    banner = panel.error_banner
    assert "ConvInteger node #1 (unnamed)" in banner.message()
    assert "onnxruntime::" not in banner.message()
    assert banner.details_button.isVisible() and not banner.details.isVisible()
    banner.details_button.click()
    assert banner.details.isVisible()
    assert "onnxruntime::ConvInteger::Compute" in banner.details.toPlainText()
    panel.shutdown()


def test_the_checkers_context_becomes_the_node_it_names() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="r1", foo=1)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    with pytest.raises(onnx.checker.ValidationError) as caught:
        onnx.checker.check_model(make_model(graph, opset=13))
    assert onnx_message(str(caught.value)) == \
        "Unrecognized attribute: foo for operator Relu (node 'r1', Relu)"


def test_a_real_node_test_onnxruntime_refuses_is_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """pytorch-operator's Add-6 test in ../shared: onnxruntime has no kernel that old."""
    from tests.conftest import shared_model

    folder = shared_model("node/pytorch-operator/test_operator_add_broadcast/test_data_set_0")
    assert main(["run", str(folder.parent / "model.onnx"), str(folder)]) == 2
    assert capsys.readouterr().err.strip() == (
        "onnxstudio: model.onnx: onnxruntime cannot load this model: Add node #0 (unnamed): "
        "onnxruntime has no Add (opset 6) kernel for these input types on this provider "
        "(onnxruntime supports ai.onnx from opset 7 on)")
