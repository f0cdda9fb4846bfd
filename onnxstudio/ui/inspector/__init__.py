"""The inspector room: node, model, opset, weights and search panels. A feature room:
imports canvas/, widgets/ and the shell services, never another feature room."""
