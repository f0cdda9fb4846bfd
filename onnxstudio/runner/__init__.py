"""Qt-free running of models (qt_worker.py is the one Qt bridge); see docs/architecture.md."""
