"""Packaging: the desktop entry validates, --install-desktop registers .onnx for the user
(checked with the same xdg-mime a file manager's "open" uses), uninstall leaves nothing
behind, and the PyInstaller one-folder build starts and opens the sample model."""

from __future__ import annotations

import ctypes
import json
import os
import plistlib
import shutil
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from onnxstudio.desktop_integration import entry as de
from onnxstudio.desktop_integration import xdg

REPO = Path(__file__).resolve().parent.parent
LINUX = REPO / "packaging" / "linux"
SAMPLE = REPO / "resources" / "sample" / "digits_cnn.onnx"
DE_VARIABLES = ("XDG_CURRENT_DESKTOP", "XDG_SESSION_DESKTOP", "DESKTOP_SESSION", "KDE_FULL_SESSION",
                "KDE_SESSION_VERSION", "GNOME_DESKTOP_SESSION_ID", "MATE_DESKTOP_SESSION_ID")


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} not installed (scripts/bootstrap.sh test installs it)")
    return path


def generic_env() -> dict[str, str]:
    """This process's environment (temporary XDG dirs from conftest), no desktop session."""
    env = {k: v for k, v in os.environ.items() if k not in DE_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def onnxstudio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onnxstudio", *args], env=generic_env(),
                          capture_output=True, text=True, timeout=120, check=False)


# How xdg-mime finds a file's type: a generic session asks `mimetype` (Debian:
# libfile-mimeinfo-perl, which `file` cannot replace: it ignores the MIME database),
# a GNOME session asks `gio` (libglib2.0-bin). Both read the user's shared-mime-info.
SESSIONS = {"generic": "mimetype", "GNOME": "gio"}


@pytest.fixture(params=list(SESSIONS))
def session(request: pytest.FixtureRequest) -> str:
    need(SESSIONS[request.param])
    return str(request.param)


def xdg_mime(*args: str, session: str = "generic") -> str:
    need("xdg-mime")
    env = generic_env()
    if session != "generic":
        env["XDG_CURRENT_DESKTOP"] = session
    result = subprocess.run(["xdg-mime", *args], env=env, capture_output=True,
                            text=True, timeout=60, check=False)
    return result.stdout.strip()


def tree(*roots: Path) -> set[str]:
    return {str(p) for root in roots if root.exists() for p in [root, *root.rglob("*")]}


# ---------------------------------------------------------------- static files


def test_desktop_entry_passes_desktop_file_validate() -> None:
    result = subprocess.run([need("desktop-file-validate"), str(LINUX / "onnxstudio.desktop")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout


def test_packaging_files_are_what_the_installer_writes() -> None:
    """One source of truth: the files in packaging/linux/ equal what --install-desktop writes."""
    entry = (LINUX / "onnxstudio.desktop").read_text(encoding="utf-8")
    assert entry == de.desktop_entry()
    assert "MimeType=application/x-onnx;\n" in entry
    assert "Exec=onnxstudio %F\n" in entry
    assert (LINUX / "onnxstudio-mime.xml").read_text(encoding="utf-8") == de.MIME_XML


def test_mime_package_declares_onnx_glob(tmp_path: Path) -> None:
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    root = ET.parse(LINUX / "onnxstudio-mime.xml").getroot()
    mime = root.find("m:mime-type", ns)
    assert mime is not None and mime.get("type") == "application/x-onnx"
    assert [g.get("pattern") for g in mime.findall("m:glob", ns)] == ["*.onnx"]
    (tmp_path / "packages").mkdir()
    shutil.copy(LINUX / "onnxstudio-mime.xml", tmp_path / "packages")
    subprocess.run([need("update-mime-database"), str(tmp_path)], check=True,
                   capture_output=True)
    assert "application/x-onnx:*.onnx" in (tmp_path / "globs2").read_text()


def test_appstream_metainfo_is_valid() -> None:
    metainfo = LINUX / "io.github.onnxstudio.metainfo.xml"
    root = ET.parse(metainfo).getroot()
    assert root.findtext("launchable") == "onnxstudio.desktop"
    assert root.find("provides/mediatype").text == "application/x-onnx"
    if shutil.which("appstreamcli") is None:
        pytest.skip("appstreamcli not installed: XML checked, AppStream rules not")
    result = subprocess.run(["appstreamcli", "validate", "--no-net", str(metainfo)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_macos_info_plist_declares_onnx_without_owning_it() -> None:
    with open(REPO / "packaging" / "macos" / "Info.plist", "rb") as fh:
        plist = plistlib.load(fh)
    doc = plist["CFBundleDocumentTypes"][0]
    assert doc["LSHandlerRank"] == "Alternate"
    uti = plist["UTImportedTypeDeclarations"][0]
    assert uti["UTTypeIdentifier"] in doc["LSItemContentTypes"]
    assert uti["UTTypeTagSpecification"]["public.filename-extension"] == ["onnx"]
    assert "UTExportedTypeDeclarations" not in plist


def test_inno_setup_adds_open_with_and_only_takes_default_when_asked() -> None:
    iss = (REPO / "packaging" / "windows" / "onnxstudio.iss").read_text(encoding="utf-8")
    assert r'Subkey: "Software\Classes\.onnx\OpenWithProgids"' in iss
    default_lines = [ln for ln in iss.splitlines()
                     if ln.startswith("Root:") and r'"Software\Classes\.onnx";' in ln
                     and 'ValueName: "";' in ln]
    assert default_lines and all("Tasks: makedefault" in ln for ln in default_lines)
    assert 'Name: "makedefault"' in iss and "Flags: unchecked" in iss


@pytest.mark.parametrize(("arg", "quoted"), [
    ("/usr/bin/onnxstudio", "/usr/bin/onnxstudio"),
    ("/opt/my apps/onnxstudio", '"/opt/my apps/onnxstudio"'),
    ('/a"b$c', '"/a\\\\"b\\\\$c"'),
    ("100%", "100%%"),
])
def test_exec_arguments_are_quoted_per_spec(arg: str, quoted: str) -> None:
    assert de.quote_exec_arg(arg) == quoted


# ---------------------------------------------------------------- install / uninstall


def test_install_registers_type_and_default_and_uninstall_removes_it(
    tmp_path: Path, session: str
) -> None:
    data, config = xdg.data_home(), xdg.config_home()
    assert os.environ["XDG_DATA_HOME"] == str(data)  # conftest: never the real user's
    before = tree(data, config)

    def query(*args: str) -> str:
        return xdg_mime("query", *args, session=session)

    model = tmp_path / "x.onnx"
    shutil.copy(SAMPLE, model)
    assert query("filetype", str(model)) != "application/x-onnx"

    result = onnxstudio("--install-desktop")
    assert result.returncode == 0, result.stderr
    entry = data / "applications" / "onnxstudio.desktop"
    assert entry.is_file()
    assert (data / "mime" / "packages" / "onnxstudio.xml").is_file()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / "onnxstudio.svg").is_file()
    assert (data / "icons" / "hicolor" / "48x48" / "mimetypes" / "application-x-onnx.png").is_file()
    validate = subprocess.run([need("desktop-file-validate"), str(entry)],
                              capture_output=True, text=True, check=False)
    assert validate.returncode == 0, validate.stdout

    # The Exec= command really starts this installation.
    exec_line = next(ln for ln in entry.read_text().splitlines() if ln.startswith("Exec="))
    command = de.launch_command()
    assert exec_line == "Exec=" + " ".join(de.quote_exec_arg(a) for a in command) + " %F"
    version = subprocess.run([*command, "--version"], capture_output=True, text=True,
                             timeout=60, check=False, cwd=tmp_path)
    assert version.stdout.startswith("onnxstudio "), version.stderr

    assert query("filetype", str(model)) == "application/x-onnx"
    assert query("default", "application/x-onnx") == "onnxstudio.desktop"

    result = onnxstudio("--uninstall-desktop")
    assert result.returncode == 0, result.stderr
    assert query("filetype", str(model)) != "application/x-onnx"
    assert query("default", "application/x-onnx") == ""
    assert tree(data, config) == before


def test_install_does_not_steal_the_default_from_another_viewer(tmp_path: Path) -> None:
    data, config = xdg.data_home(), xdg.config_home()
    viewer = data / "applications" / "other-viewer.desktop"
    viewer.parent.mkdir(parents=True)
    viewer.write_text("[Desktop Entry]\nType=Application\nName=Other viewer\n"
                      "Exec=/bin/true %f\nMimeType=application/x-onnx;\n")
    config.mkdir(parents=True)
    mimeapps = config / "mimeapps.list"
    original = "[Added Associations]\ntext/plain=other-viewer.desktop;\n"
    mimeapps.write_text(original)
    before = tree(data, config)

    result = onnxstudio("--install-desktop")
    assert result.returncode == 0, result.stderr
    assert "other-viewer.desktop; it stays the default" in result.stdout
    assert "xdg-mime default onnxstudio.desktop application/x-onnx" in result.stdout
    assert xdg_mime("query", "default", "application/x-onnx") == "other-viewer.desktop"

    assert onnxstudio("--uninstall-desktop").returncode == 0
    assert mimeapps.read_text() == original
    assert viewer.is_file()
    assert tree(data, config) == before


def test_install_keeps_an_explicit_default_untouched(tmp_path: Path) -> None:
    config = xdg.config_home()
    config.mkdir(parents=True)
    mimeapps = config / "mimeapps.list"
    original = "[Default Applications]\napplication/x-onnx=netron.desktop;\n"
    mimeapps.write_text(original)
    result = onnxstudio("--install-desktop")
    assert result.returncode == 0, result.stderr
    assert "not made the default" in result.stdout
    assert mimeapps.read_text() == original
    assert onnxstudio("--uninstall-desktop").returncode == 0
    assert mimeapps.read_text() == original


def test_reinstall_is_idempotent_and_keeps_other_defaults(tmp_path: Path) -> None:
    config = xdg.config_home()
    config.mkdir(parents=True)
    mimeapps = config / "mimeapps.list"
    mimeapps.write_text("[Default Applications]\ntext/plain=editor.desktop;\n")
    assert onnxstudio("--install-desktop").returncode == 0
    assert onnxstudio("--install-desktop").returncode == 0
    text = mimeapps.read_text()
    assert text.count("application/x-onnx=onnxstudio.desktop;") == 1
    assert "text/plain=editor.desktop;" in text
    assert onnxstudio("--uninstall-desktop").returncode == 0
    assert mimeapps.read_text() == "[Default Applications]\ntext/plain=editor.desktop;\n"
    assert not (xdg.data_home() / "applications" / "onnxstudio.desktop").exists()


# ---------------------------------------------------------------- PyInstaller build


@pytest.fixture(scope="module")
def frozen_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the one-folder app once for this module (about a minute on two cores)."""
    pytest.importorskip("PyInstaller", reason="pip install pyinstaller (dev extra)")
    if sys.platform.startswith("linux"):
        if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
            pytest.skip("PyInstaller needs a Python built with --enable-shared")
        libpython = sysconfig.get_config_var("INSTSONAME")
        try:
            ctypes.CDLL(libpython)
        except OSError:  # Debian's python3 links it statically and ships the .so apart
            pytest.skip(f"PyInstaller bundles {libpython}, which is not installed (Debian: "
                        f"apt-get install libpython{sys.version_info[0]}.{sys.version_info[1]}; "
                        "scripts/bootstrap.sh test installs it)")
        need("objdump")
    work = tmp_path_factory.mktemp("pyinstaller")
    result = subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(work / "dist"), "--workpath", str(work / "build"),
         str(REPO / "packaging" / "pyinstaller" / "onnxstudio.spec")],
        cwd=REPO, capture_output=True, text=True, timeout=1800, check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    exe = work / "dist" / "onnxstudio" / ("onnxstudio.exe" if os.name == "nt" else "onnxstudio")
    assert exe.is_file()
    return exe


def frozen_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


@pytest.mark.slow
def test_frozen_app_reads_the_sample_model(frozen_app: Path, tmp_path: Path) -> None:
    bundled = next(frozen_app.parent.rglob("_resources/sample/digits_cnn.onnx"))
    result = subprocess.run([str(frozen_app), "info", str(bundled), "--json"], env=frozen_env(),
                            cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["producer_name"] == "onnxstudio-sample"
    assert info["node_count"] == 12


@pytest.mark.slow
def test_frozen_app_classifies_a_sample_image(frozen_app: Path, tmp_path: Path) -> None:
    sample = next(frozen_app.parent.rglob("_resources/sample/digits_cnn.onnx")).parent
    result = subprocess.run(
        [str(frozen_app), "run", str(sample / "digits_cnn.onnx"), str(sample / "digit_7.png"),
         "--json"], env=frozen_env(), cwd=tmp_path, capture_output=True, text=True,
        timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[0])["top"][0]["label"] == "7"


@pytest.mark.slow
def test_frozen_app_installs_desktop_entry_pointing_at_itself(frozen_app: Path) -> None:
    env = {k: v for k, v in frozen_env().items() if k not in DE_VARIABLES}
    result = subprocess.run([str(frozen_app), "--install-desktop"], env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    entry = (xdg.data_home() / "applications" / "onnxstudio.desktop").read_text()
    assert f"Exec={frozen_app} %F" in entry.splitlines()
    assert (xdg.data_home() / "icons/hicolor/256x256/apps/onnxstudio.png").is_file()
    assert subprocess.run([str(frozen_app), "--uninstall-desktop"], env=env,
                          capture_output=True, timeout=120, check=False).returncode == 0


@pytest.mark.slow
def test_frozen_app_window_opens_the_sample_model(frozen_app: Path, tmp_path: Path) -> None:
    """No argument: the window opens the bundled sample model, then quits (headless)."""
    app_sources = REPO / "onnxstudio" / "ui"
    if not any("ONNXSTUDIO_QUIT_AFTER_OPEN" in p.read_text(encoding="utf-8")
               for p in app_sources.rglob("*.py")):
        pytest.skip("the window does not support ONNXSTUDIO_QUIT_AFTER_OPEN yet")
    env = frozen_env()
    env["ONNXSTUDIO_QUIT_AFTER_OPEN"] = "1"
    result = subprocess.run([str(frozen_app), "--new-instance"], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=180, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    # The same check fails when a model cannot be opened, so the 0 above means "shown".
    missing = subprocess.run([str(frozen_app), "--new-instance", str(tmp_path / "no.onnx")],
                             env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=180, check=False)
    assert missing.returncode == 1, missing.stdout + missing.stderr
    assert "no.onnx" in missing.stderr


@pytest.mark.slow
def test_frozen_app_keeps_layouts_in_its_cache(frozen_app: Path, tmp_path: Path) -> None:
    """The frozen app has no sources to fingerprint: the build stamp stands for them
    (onnxstudio/build_stamp.py), so its layout cache works (before, it was off)."""
    from tests.benchmarks.ladder import dag
    from tests.builders import save

    # every group expanded (under 10,000 boxes): ~0.4 s of layout, twice MIN_SECONDS (dag5k
    # took 0.2 s once the per-unit Python was batched, and was not kept)
    model = save(dag(9_000), tmp_path / "dag9k.onnx")
    env = frozen_env()
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    for name in ("first.svg", "second.svg"):
        result = subprocess.run([str(frozen_app), "export", str(model), str(tmp_path / name)],
                                env=env, capture_output=True, text=True, timeout=300,
                                check=False)
        assert result.returncode == 0, result.stderr
    assert list((tmp_path / "cache" / "onnxstudio" / "layouts").glob("*.layout"))
    assert (tmp_path / "first.svg").read_bytes() == (tmp_path / "second.svg").read_bytes()
