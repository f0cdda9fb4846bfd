"""onnxstudio: see, inspect, run and export ONNX models."""

__version__ = "0.1.0"
