"""Editing a model in the window: undoable edits, the history, scripts and Save As."""
