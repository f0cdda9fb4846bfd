"""Entry script of the frozen app: PyInstaller needs a file, the CLI does the rest."""

from onnxstudio.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
