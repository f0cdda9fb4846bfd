"""`python -m onnxstudio` is the same as the `onnxstudio` command."""

from onnxstudio.cli import main

raise SystemExit(main())
