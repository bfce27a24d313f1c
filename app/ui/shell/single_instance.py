"""One window per user: "Open with" on a PDF while the app runs hands the file to that window.

The running window listens on a local socket (QLocalServer) named after the user's config
folder. A second `research-desk paper.pdf` connects, sends the paths as one JSON line and
exits; the window imports them (open_files.import_and_show) and comes to the front. Without a
running window the connection fails at once and the second start opens its own window.
A start with another `--library` than the window's is not handed over.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from app.core import paths

log = logging.getLogger(__name__)
CONNECT_MS = 500
SEND_MS = 2000


def server_name() -> str:
    """Per user and config folder (tests and portable installs each get their own)."""
    key = f"{os.getuid() if hasattr(os, 'getuid') else os.environ.get('USERNAME', '')}:{paths.config_dir()}"
    return "research-desk-" + hashlib.sha1(key.encode()).hexdigest()[:16]


def hand_over(files: list[str], library: str | None = None) -> bool:
    """Send `files` to a running window; True when one took them."""
    socket = QLocalSocket()
    socket.connectToServer(server_name())
    if not socket.waitForConnected(CONNECT_MS):
        return False
    socket.write((json.dumps({"files": files, "library": library or ""}) + "\n").encode())
    sent = socket.waitForBytesWritten(SEND_MS)
    # The answer may already be in (read while the bytes went out): only then wait for it.
    arrived = sent and (socket.bytesAvailable() > 0 or socket.waitForReadyRead(SEND_MS))
    answered = arrived and bytes(socket.readAll().data()).strip() == b"ok"
    socket.disconnectFromServer()
    return bool(answered)


def _alive(name: str) -> bool:
    probe = QLocalSocket()
    probe.connectToServer(name)
    alive = probe.waitForConnected(CONNECT_MS)
    probe.abort()
    return alive


class InstanceServer(QObject):
    """Listens for other starts' files and opens them in `window`."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        name = server_name()
        if not self.server.listen(name):
            if _alive(name):  # another window (another library) listens: it keeps the hand-overs
                log.info("another window takes the files of later starts")
            else:
                QLocalServer.removeServer(name)  # a stale socket file left by a crash
                if not self.server.listen(name):
                    log.warning("cannot listen for other starts (%s): %s", name, self.server.errorString())
        self.server.newConnection.connect(self._connection)

    def _connection(self) -> None:
        socket = self.server.nextPendingConnection()
        if socket is None:
            return
        socket.readyRead.connect(lambda: self._read(socket))

    def _read(self, socket: QLocalSocket) -> None:
        if not socket.canReadLine():
            return
        try:
            message = json.loads(bytes(socket.readLine().data()).decode("utf-8"))
            files = [str(f) for f in message.get("files", [])]
            library = str(message.get("library") or "")
        except (ValueError, AttributeError) as exc:
            log.warning("ignored a malformed message from another start: %s", exc)
            socket.write(b"no\n")
            socket.disconnectFromServer()
            return
        same = not library or Path(library).expanduser().absolute() == Path(self.window.library.location or "").absolute()
        socket.write(b"ok\n" if same else b"no\n")
        socket.flush()
        socket.disconnectFromServer()
        if same:
            from .open_files import import_and_show

            log.info("another start handed over %d file(s)", len(files))
            self.window.showNormal()
            self.window.raise_()
            self.window.activateWindow()
            if files:
                import_and_show(self.window, files)

    def close(self) -> None:
        self.server.close()
