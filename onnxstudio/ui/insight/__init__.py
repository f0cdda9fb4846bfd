"""The insight room: run, profile, tensor and compare panels. A feature room: imports
canvas/, widgets/ and the shell services, never another feature room."""
