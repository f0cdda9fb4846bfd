"""One window per user: a second launch hands its files to the running app and exits.

A QLocalServer named after the user listens in the first instance; a later launch
connects, sends the absolute paths as JSON, and the first instance opens them.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QLocalServer, QLocalSocket

TIMEOUT_MS = 1500


def server_name() -> str:
    suffix = os.environ.get("ONNXSTUDIO_INSTANCE", "")
    return f"onnxstudio-{getpass.getuser()}{'-' + suffix if suffix else ''}"


def hand_over(paths: list[str]) -> bool:
    """Send ``paths`` to a running instance; True if one took them."""
    socket = QLocalSocket()
    socket.connectToServer(server_name())
    if not socket.waitForConnected(TIMEOUT_MS):
        return False
    socket.write(json.dumps({"open": [os.path.abspath(p) for p in paths]}).encode() + b"\n")
    socket.flush()
    socket.waitForBytesWritten(TIMEOUT_MS)
    ok = socket.waitForReadyRead(TIMEOUT_MS) and bytes(socket.readAll().data()).startswith(b"ok")
    socket.disconnectFromServer()
    return ok


class InstanceServer(QObject):
    """Listens for later launches and calls ``on_open(paths)`` with what they send."""

    def __init__(self, on_open: Callable[[list[str]], object], parent: QObject | None = None):
        super().__init__(parent)
        self._on_open = on_open
        self._server = QLocalServer(self)
        self._server.newConnection.connect(self._accept)
        if not self._server.listen(server_name()):
            # A stale socket from a crashed instance: nobody answered hand_over, so remove it.
            QLocalServer.removeServer(server_name())
            self._server.listen(server_name())

    @property
    def listening(self) -> bool:
        return self._server.isListening()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._read(s))

    def _read(self, socket: QLocalSocket) -> None:
        if not socket.canReadLine():
            return
        try:
            message = json.loads(bytes(socket.readLine().data()).decode())
            paths = [str(p) for p in message.get("open", [])]
        except (ValueError, AttributeError):
            socket.write(b"error\n")
            return
        socket.write(b"ok\n")
        socket.flush()
        socket.disconnectFromServer()
        self._on_open(paths)

    def close(self) -> None:
        self._server.close()
