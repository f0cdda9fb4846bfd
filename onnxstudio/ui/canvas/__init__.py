"""The canvas room: the graph view, its minimap and legend, and the model tab that
loads and lays a model out. Imports widgets/ and the shell services (settings, tasks)."""
