"""Linux desktop integration (``--install-desktop``): ``entry`` makes the desktop entry and
MIME package, ``xdg`` reads and edits the XDG default-application lists, ``install``
writes and removes them with a manifest.
"""
