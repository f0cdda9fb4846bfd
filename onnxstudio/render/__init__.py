"""render layer; see docs/architecture.md."""
