"""What a user gets from `pip install onnxstudio`: the sdist and wheel carry resources/ and
py.typed, and a fresh venv with the built wheel (no checkout on sys.path) opens the sample
model headless, names the classes of a 1000-class output and loads the icon."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parent.parent
# What goes into the build: the rest of the checkout (tests, .git, caches) must not matter.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "onnxstudio", "resources")
ESPRESSO = 967  # ImageNet-1k index of "espresso"


def packages_on_disk() -> set[str]:
    found = {".".join(p.parent.relative_to(REPO).parts)
             for p in (REPO / "onnxstudio").rglob("__init__.py")}
    return found | {"onnxstudio._resources"}


def test_every_package_is_listed_in_pyproject() -> None:
    """pyproject lists packages (resources/ is mapped in); a forgotten one is a broken wheel."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    assert packages_on_disk() - listed == set(), "add these to [tool.setuptools] packages"
    missing = {p for p in listed if not p.startswith("onnxstudio._resources")} - packages_on_disk()
    assert missing == set(), "listed in pyproject but absent"


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def check(cmd: list[str], cwd: Path, **env: str) -> str:
    result = subprocess.run(cmd, cwd=cwd, env={**clean_env(), **env}, capture_output=True,
                            text=True, timeout=900, check=False)
    assert result.returncode == 0, f"{cmd}\n{result.stdout}\n{result.stderr[-4000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sdist, then the wheel built from that sdist (python -m build does both)."""
    pytest.importorskip("build", reason="pip install build (dev extra)")
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(origin, src / name)
    out = tmp_path_factory.mktemp("dist")
    check([sys.executable, "-m", "build", "--outdir", str(out), str(src)], cwd=src)
    return out


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its dependencies (pip's cache makes this quick)."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=False, symlinks=os.name != "nt")
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    wheel = next(dist.glob("*.whl"))
    check([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
           "--disable-pip-version-check", str(wheel)], cwd=env_dir)
    return python


def run_in(python: Path, cwd: Path, *args: str, **env: str) -> str:
    return check([str(python), *args], cwd=cwd, **env)


@pytest.mark.slow
def test_wheel_and_sdist_carry_resources_and_type_marker(dist: Path) -> None:
    with zipfile.ZipFile(next(dist.glob("*.whl"))) as whl:
        names = set(whl.namelist())
    for required in ("onnxstudio/py.typed", "onnxstudio/_resources/sample/digits_cnn.onnx",
                     "onnxstudio/_resources/sample/digit_7.png",
                     "onnxstudio/_resources/labels/imagenet1k.txt",
                     "onnxstudio/_resources/icons/onnxstudio.svg",
                     "onnxstudio/_resources/icons/hicolor/48x48/apps/onnxstudio.png"):
        assert required in names
    packages = {n.rsplit("/", 1)[0].replace("/", ".") for n in names
                if n.endswith("/__init__.py")}
    assert packages_on_disk() <= packages
    assert not [n for n in names if n.startswith("onnxstudio/_resources/") and n.endswith(".py")
                and not n.endswith("/__init__.py")]
    with tarfile.open(next(dist.glob("*.tar.gz"))) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {"resources/sample/digits_cnn.onnx", "resources/labels/imagenet1k.txt",
            "resources/icons/onnxstudio.svg", "onnxstudio/py.typed"} <= members


@pytest.mark.slow
def test_installed_wheel_opens_the_sample_model(installed: Path, tmp_path: Path) -> None:
    where = run_in(installed, tmp_path, "-c", "import onnxstudio, onnxstudio.resources as r; "
                   "print(onnxstudio.__file__); print(r.resource('sample', 'digits_cnn.onnx'))")
    package_file, sample = where.splitlines()
    venv_root = installed.parent.parent
    assert Path(package_file).is_relative_to(venv_root), "imported from the checkout"
    assert Path(sample).is_relative_to(venv_root) and Path(sample).is_file()

    info = json.loads(run_in(installed, tmp_path, "-m", "onnxstudio", "info", sample, "--json"))
    assert (info["producer_name"], info["node_count"]) == ("onnxstudio-sample", 12)
    # No file argument: the window opens the bundled sample model, then quits.
    run_in(installed, tmp_path, "-m", "onnxstudio", "--new-instance",
           ONNXSTUDIO_QUIT_AFTER_OPEN="1")


def thousand_class_model(path: Path) -> None:
    """An ImageNet-shaped classifier that answers "espresso" (its bias) for any photo."""
    bias = np.zeros(1000, np.float32)
    bias[ESPRESSO] = 10.0
    graph = helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["data"], ["pooled"]),
         helper.make_node("Flatten", ["pooled"], ["flat"]),
         helper.make_node("Gemm", ["flat", "W", "B"], ["logits"]),
         helper.make_node("Softmax", ["logits"], ["prob"], axis=1)],
        "thousand",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 224, 224])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 1000])],
        [numpy_helper.from_array(np.full((3, 1000), 0.01, np.float32), "W"),
         numpy_helper.from_array(bias, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10  # onnxruntime may not accept onnx's newest IR
    onnx.save(model, path)


@pytest.mark.slow
def test_installed_wheel_names_imagenet_classes(installed: Path, tmp_path: Path) -> None:
    model = tmp_path / "classifier.onnx"
    thousand_class_model(model)
    photo = run_in(installed, tmp_path, "-c", "from onnxstudio.resources import resource; "
                   "print(resource('sample', 'digit_7.png'))").strip()
    out = run_in(installed, tmp_path, "-m", "onnxstudio", "run", str(model), photo, "--json")
    top = json.loads(out.splitlines()[0])["top"][0]
    assert top["label"] == "espresso", top


@pytest.mark.slow
def test_installed_wheel_loads_the_icon(installed: Path, tmp_path: Path) -> None:
    code = ("from PySide6.QtGui import QGuiApplication, QIcon\n"
            "from onnxstudio.resources import resource\n"
            "app = QGuiApplication([])\n"
            "icon = QIcon(str(resource('icons', 'onnxstudio.svg')))\n"
            "image = icon.pixmap(64, 64).toImage()\n"
            "print(image.width(), image.pixelColor(32, 32).alpha())\n")
    width, alpha = run_in(installed, tmp_path, "-c", code).split()
    assert width == "64" and int(alpha) > 0
