"""Detectors and segmenters: boxes in the ORIGINAL image's pixels for every resize mode
(a model that finds a bright rectangle, so the truth is known), NMS, the real Ultraface on
the cameraman photo, masks, the overlay and `run --json --save-outputs`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper
from PIL import Image

from onnxstudio.cli import main
from onnxstudio.runner.detect import nms
from onnxstudio.runner.draw import colour, draw_detections
from onnxstudio.runner.pipeline import ImageSource, Pipeline, RunRequest
from onnxstudio.runner.preprocess import PreprocessOptions
from tests.builders import make_model, save
from tests.conftest import shared_model

H, W = 120, 160  # the model's input
BOX = (100, 120, 300, 360)  # x1, y1, x2, y2 (exclusive) of the white rectangle, 640x480 photo


def rectangle_finder() -> object:
    """scores [1, 1, 2] + boxes [1, 1, 4] (normalised corners) of the bright pixels."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("ReduceMax", ["x"], ["g"], axes=[1], keepdims=0),
        helper.make_node("ReduceMax", ["g"], ["rows"], axes=[2], keepdims=0),
        helper.make_node("ReduceMax", ["g"], ["cols"], axes=[1], keepdims=0),
        helper.make_node("Constant", [], ["half"], value=helper.make_tensor("h", f, [], [0.5])),
        helper.make_node("Greater", ["rows", "half"], ["rb"]),
        helper.make_node("Greater", ["cols", "half"], ["cb"]),
        helper.make_node("Cast", ["rb"], ["rm"], to=f),
        helper.make_node("Cast", ["cb"], ["cm"], to=f),
        helper.make_node("ArgMax", ["cm"], ["x1"], axis=1, keepdims=1),
        helper.make_node("ArgMax", ["rm"], ["y1"], axis=1, keepdims=1),
        helper.make_node("ArgMax", ["cm"], ["x2"], axis=1, keepdims=1, select_last_index=1),
        helper.make_node("ArgMax", ["rm"], ["y2"], axis=1, keepdims=1, select_last_index=1),
        helper.make_node("Concat", ["x1", "y1", "x2", "y2"], ["corners"], axis=1),
        helper.make_node("Cast", ["corners"], ["cf"], to=f),
        helper.make_node("Constant", [], ["plus"], value=helper.make_tensor(
            "p", f, [4], [0, 0, 1, 1])),
        helper.make_node("Add", ["cf", "plus"], ["edges"]),
        helper.make_node("Constant", [], ["size"], value=helper.make_tensor(
            "s", f, [4], [W, H, W, H])),
        helper.make_node("Div", ["edges", "size"], ["norm"]),
        helper.make_node("Constant", [], ["shape"], value=helper.make_tensor(
            "sh", TensorProto.INT64, [3], [1, 1, 4])),
        helper.make_node("Reshape", ["norm", "shape"], ["boxes"]),
        helper.make_node("Constant", [], ["scores"], value=helper.make_tensor(
            "sc", f, [1, 1, 2], [0.1, 0.9])),
    ]
    graph = helper.make_graph(
        nodes, "finder", [helper.make_tensor_value_info("x", f, [1, 3, H, W])],
        [helper.make_tensor_value_info("scores", f, [1, 1, 2]),
         helper.make_tensor_value_info("boxes", f, [1, 1, 4])])
    return make_model(graph, opset=13)


@pytest.fixture()
def finder(tmp_path: Path) -> Path:
    return save(rectangle_finder(), tmp_path / "finder.onnx")  # type: ignore[arg-type]


@pytest.fixture()
def photo(tmp_path: Path) -> Path:
    img = np.zeros((480, 640, 3), np.uint8)
    x1, y1, x2, y2 = BOX
    img[y1:y2, x1:x2] = 255
    path = tmp_path / "rect.png"
    Image.fromarray(img).save(path)
    return path


@pytest.mark.parametrize("resize", [None, "stretch", "letterbox", "crop"])
def test_boxes_come_back_in_the_original_pixels(finder: Path, photo: Path,
                                                resize: str | None) -> None:
    request = RunRequest(finder, images=[ImageSource(photo.name, photo)],
                         options=PreprocessOptions(resize=resize))
    (out,) = Pipeline().execute(request)
    assert out.preprocessed.plan.resize == (resize or "stretch")  # the family's default
    assert out.detections is not None and out.detections.format == "scores_boxes"
    (found,) = out.detections.above()
    assert found.score == pytest.approx(0.9) and found.label == "object"
    one_input_pixel = 640 / W * (256 / 224 if resize == "crop" else 1) + 1
    np.testing.assert_allclose(found.box, BOX, atol=one_input_pixel)


def test_threshold_filters_and_nms_keeps_the_best_of_overlapping_boxes() -> None:
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60]], float)
    scores = np.array([0.8, 0.9, 0.3])
    assert nms(boxes, scores, 0.45) == [1, 2]
    assert nms(boxes, scores, 0.9) == [1, 0, 2]


def test_ultraface_finds_the_cameramans_face() -> None:
    model = shared_model("ortdata/examples/Ultraface.version-RFB-320.onnx")
    image = shared_model("images/camera.png")
    request = RunRequest(model, images=[ImageSource(image.name, image)], threshold=0.7)
    (out,) = Pipeline().execute(request)
    faces = out.detections.above()
    assert len(faces) == 1  # NMS merged the overlapping anchors; the coffee-cup trap is gone
    x1, y1, x2, y2 = faces[0].box
    assert 180 < x1 < 215 and 95 < y1 < 125 and 245 < x2 < 280 and 180 < y2 < 210
    coffee = shared_model("images/coffee.png")
    (cup,) = Pipeline().execute(RunRequest(model, images=[ImageSource(coffee.name, coffee)],
                                           threshold=0.7))
    assert cup.detections.above() == []


def test_overlay_draws_the_box_where_the_detection_is(finder: Path, photo: Path) -> None:
    (out,) = Pipeline().execute(RunRequest(finder, images=[ImageSource(photo.name, photo)]))
    drawn = draw_detections(out.preprocessed.original, out.detections.above())
    x1, y1, x2, y2 = (round(v) for v in out.detections.above()[0].box)
    assert tuple(drawn[(y1 + y2) // 2, x1]) == colour(1)  # left edge, half-way down
    assert tuple(drawn[(y1 + y2) // 2, (x1 + x2) // 2]) == (255, 255, 255)  # inside untouched


def test_cli_json_detections_and_saved_overlay(finder: Path, photo: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "out"
    assert main(["run", str(finder), str(photo), "--json", "--save-outputs",
                 str(out_dir)]) == 0
    data = json.loads(capsys.readouterr().out)
    (det,) = data["detections"]
    assert det["label"] == "object" and det["score"] == pytest.approx(0.9)
    np.testing.assert_allclose(det["box"], BOX, atol=5)
    assert any("stretch" in r for r in data["reasons"])
    saved = out_dir / "rect.detections.png"
    with Image.open(saved) as image:
        assert image.size == (640, 480)


def test_segmenter_mask_lands_on_the_original_pixels(tmp_path: Path) -> None:
    """A 2-class per-pixel score map (background vs bright): the mask covers the rectangle."""
    f = TensorProto.FLOAT
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=1),
             helper.make_node("Neg", ["m"], ["n"]),
             helper.make_node("Concat", ["n", "m"], ["logits"], axis=1)]
    graph = helper.make_graph(nodes, "seg", [helper.make_tensor_value_info("x", f, [1, 3, 64, 64])],
                              [helper.make_tensor_value_info("logits", f, [1, 2, 64, 64])])
    model = save(make_model(graph, opset=13), tmp_path / "seg.onnx")
    img = np.zeros((300, 200, 3), np.uint8)
    img[100:200, 50:150] = 255
    Image.fromarray(img).save(tmp_path / "sq.png")
    (out,) = Pipeline().execute(RunRequest(model, images=[ImageSource("sq", tmp_path / "sq.png")]))
    seg = out.segmentation
    assert seg is not None and seg.classes.shape == (300, 200)
    assert (seg.classes[110:190, 60:140] == 1).all() and (seg.classes[:90] == 0).all()
    assert seg.areas[0][1] == "class 0" and seg.areas[1][2] == pytest.approx(1 / 6, abs=0.02)


def _spec(name: str, shape: tuple, dtype: str = "float32"):
    from onnxstudio.runner.inputs import TensorSpec
    return TensorSpec(name, "tensor", dtype, shape)


def test_every_output_convention_is_recognised_and_decoded_to_input_pixels() -> None:
    from onnxstudio.runner.detect_formats import decode, recognise

    image = (1, 3, 640, 640)
    # YOLOv5: [1, N, 5+C] centre/size/objectness/classes, in input pixels
    v5 = np.zeros((1, 1000, 85), np.float32)
    v5[0, 7, :4] = (320, 240, 100, 50)
    v5[0, 7, 4], v5[0, 7, 5 + 16] = 0.9, 0.8
    assert recognise([_spec("output0", v5.shape)], image) == "yolo_n5c"
    c = decode("yolo_n5c", {"output0": v5}, (640, 640))
    assert c.classes[7] == 16 and c.scores[7] == pytest.approx(0.72)
    np.testing.assert_allclose(c.boxes[7], (270, 215, 370, 265))
    # YOLOv8: [1, 4+C, N]
    v8 = np.ascontiguousarray(np.delete(v5, 4, axis=2).transpose(0, 2, 1))
    assert recognise([_spec("output0", v8.shape)], image) == "yolo_4cn"
    c = decode("yolo_4cn", {"output0": v8}, (640, 640))
    assert c.classes[7] == 16 and c.scores[7] == pytest.approx(0.8)
    # TF Object Detection API: normalised (ymin, xmin, ymax, xmax), classes, a count
    tf = {"detection_boxes": np.array([[[0.25, 0.5, 0.75, 1.0]]], np.float32),
          "detection_scores": np.array([[0.6]], np.float32),
          "detection_classes": np.array([[3]], np.float32),
          "num_detections": np.array([1], np.float32)}
    assert recognise([_spec(n, v.shape) for n, v in tf.items()], image) == "tf_od"
    c = decode("tf_od", tf, (480, 640))
    np.testing.assert_allclose(c.boxes[0], (320, 120, 640, 360))
    # Caffe SSD DetectionOutput [1, 1, N, 7]
    ssd = np.array([[[[0, 2, 0.7, 0.1, 0.2, 0.3, 0.4], [-1, 0, 0, 0, 0, 0, 0]]]], np.float32)
    assert recognise([_spec("detection_out", ssd.shape)], image) == "ssd7"
    c = decode("ssd7", {"detection_out": ssd}, (300, 300))
    assert len(c.scores) == 1 and c.classes[0] == 2
    np.testing.assert_allclose(c.boxes[0], (30, 60, 90, 120))
    # a per-pixel class map the size of the input; a feature map of another size is not one
    assert recognise([_spec("out", (1, 21, 640, 640))], image) == "seg_scores"
    assert recognise([_spec("out", (1, 640, 640), "int64")], image) == "seg_map"
    assert recognise([_spec("feat", (1, 16, 112, 112))], (1, 3, 224, 224)) == ""
    assert recognise([_spec("logits", (1, 1000))], image) == ""
    assert recognise([_spec("vit", (1, 197, 768))], (1, 3, 224, 224)) == ""


def test_face_detector_keeps_its_familys_threshold_unless_the_user_sets_one() -> None:
    model = shared_model("ortdata/examples/Ultraface.version-RFB-320.onnx")
    cat = shared_model("images/chelsea.png")
    pipeline = Pipeline()
    (out,) = pipeline.execute(RunRequest(model, images=[ImageSource(cat.name, cat)]))
    assert out.detections.threshold == 0.7 and len(out.detections.above()) == 1  # its face
    (low,) = pipeline.execute(RunRequest(model, images=[ImageSource(cat.name, cat)],
                                         threshold=0.3))
    assert len(low.detections.above()) == 3
