"""export layer; see docs/architecture.md."""
