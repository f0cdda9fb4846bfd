# ruff: noqa: B018  (vulture whitelists are bare attribute expressions)
"""Names vulture reports as unused that are used (read by vulture with `onnxstudio tests`).

Settings assigned to third-party objects (onnxruntime, Pillow) are read by those
libraries; record fields that mirror the ONNX proto are kept so the record is complete;
Qt calls the virtual methods our widgets override.
"""

from onnxstudio.model.graph import Function
from onnxstudio.model.opdoc import Param
from onnxstudio.runner.inputs import TensorSpec

_ = object()
_.LOAD_TRUNCATED_IMAGES  # PIL.ImageFile setting (runner/images.py)
_.enable_profiling  # onnxruntime.SessionOptions (runner/profile.py)
_.profile_file_prefix
_.graph_optimization_level  # onnxruntime.SessionOptions (runner/session.py)
_.intra_op_num_threads
_.log_severity_level
_.optimized_model_filepath  # onnxruntime.SessionOptions (runner/optimised.py)
_.__getattr__  # module-level lazy import (PEP 562, onnxstudio/model/__init__.py)
Function.attribute_names  # FunctionProto.attribute
Param.differentiable  # OpSchema.FormalParameter.differentiation_category
TensorSpec.type_denotation  # TypeProto.denotation
_.syntax  # FileDescriptorProto / FeatureSet fields read by protobuf (model/wire.py)
_.edition
_.field_presence
_.enum_type
_.repeated_field_encoding
_.utf8_validation
_.message_encoding
_.json_format
# Qt virtual overrides: Qt calls them (events, painting, proxy filtering), never our code.
_.eventFilter  # ui/app.py (macOS file-open events), ui/widgets/dock_tabs.py
_.paintEvent  # ui/canvas/minimap.py, ui/widgets/histogram.py, ui/widgets/status.py
_.drawBackground  # ui/canvas/graph_view.py: the one painter draws the graph here
_.multiData  # ui/widgets/tables.py: a delegate's every role of a cell in one call
_.mouseReleaseEvent  # ui/canvas/graph_view.py
_.contextMenuEvent
_.dragEnterEvent  # ui/main_window.py, ui/insight/run_panel.py: file drops
_.dropEvent
_.find_class  # pickle.Unpickler hook, called by pickle (layout/cache.py)
