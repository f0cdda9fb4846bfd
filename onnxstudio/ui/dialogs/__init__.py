"""The dialogs room: export and extract. A feature room: imports canvas/, widgets/ and
the shell services, never another feature room."""
