"""layout layer; see docs/architecture.md."""
