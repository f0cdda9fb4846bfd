"""Small reusable widgets (banner, empty state, histogram, responsive splits, wrapping,
image conversion). Imports nothing from ui/ but the shell services (settings, tasks)."""
