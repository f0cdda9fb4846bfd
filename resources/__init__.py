"""Bundled data (icons, label lists, the sample model), installed as ``onnxstudio._resources``.

The folder stays at the top of the repository; pyproject.toml maps it into the package so
that every build (wheel, sdist, editable, PyInstaller) carries it. Read it through
``onnxstudio.resources``, never by path arithmetic.
"""
