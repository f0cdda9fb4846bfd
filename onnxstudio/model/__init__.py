"""model layer; see docs/architecture.md."""
