"""Unexpected errors: logged, and shown in a dialog with "Copy details" — never a silent failure.

Two ways a bug reaches the user: an exception in the UI thread (a slot, an event handler),
caught by the `sys.excepthook` the window installs, and a worker job's exception that is not
one of the core's own errors (`WorkerHost.unexpected`). Both are written to the log file
with their traceback and shown in one `ErrorDialog`; a second error while it is open is
added to it, not stacked as another window.
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from types import TracebackType

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

log = logging.getLogger(__name__)


def details_of(exc: BaseException) -> str:
    """The traceback of `exc`: the worker's, where it kept one, else the exception's own."""
    kept = getattr(exc, "ui_traceback", "")
    if kept:
        return kept
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class ErrorDialog(QDialog):
    """The message, the details (traceback and versions) folded, and a button that copies them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Research Desk — unexpected error")
        self.setAccessibleName("Unexpected error")
        self.setMinimumWidth(560)
        self.count = 0
        icon = QLabel()
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical).pixmap(40, 40))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setAccessibleName("Error message")
        self.hint = QLabel(
            "This is a bug in Research Desk, not something you did. The details are also in the log file; "
            "please send them with a word on what you were doing (Copy details, or Help → Copy diagnostics).")
        self.hint.setWordWrap(True)
        self.hint.setObjectName("muted")
        text = QVBoxLayout()
        text.addWidget(self.message)
        text.addWidget(self.hint)
        text.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(icon)
        top.addLayout(text, 1)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.details.setAccessibleName("Error details")
        self.details.setMinimumHeight(220)
        self.details.hide()
        buttons = QDialogButtonBox()
        self.toggle = QPushButton("Show details")
        self.toggle.setAccessibleName("Show or hide the error details")
        self.toggle.clicked.connect(self._toggle)
        self.copy = QPushButton("Copy details")
        self.copy.setAccessibleName("Copy the error details")
        self.copy.clicked.connect(self.copy_details)
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        close.setAccessibleName("Close")
        buttons.addButton(self.toggle, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.copy, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.details, 1)
        layout.addWidget(buttons)
        self._entries: list[str] = []

    def add_error(self, message: str, details: str) -> None:
        self.count += 1
        self._entries.append(f"{message}\n\n{details}".rstrip())
        if self.count == 1:
            self.message.setText(f"<b>Something went wrong.</b><br>{_escape(message)}")
        else:
            self.message.setText(f"<b>{self.count} unexpected errors.</b><br>The last: {_escape(message)}")
        self.details.setPlainText(self.report())
        if not self.details.isVisible():
            self.adjustSize()

    def report(self) -> str:
        from app.about import KEY_COMPONENTS, app_version, component_versions, system_line
        from app.core.desk import log_file

        versions = ", ".join(f"{n} {v}" for n, v in component_versions(KEY_COMPONENTS))
        head = f"Research Desk {app_version()} · {system_line()}\n{versions}\nLog file: {log_file()}"
        return head + "\n\n" + "\n\n----\n\n".join(self._entries) + "\n"

    def copy_details(self) -> None:
        QGuiApplication.clipboard().setText(self.report())
        self.copy.setText("Copied")
        QTimer.singleShot(2000, self, lambda: self.copy.setText("Copy details"))

    def _toggle(self) -> None:
        shown = not self.details.isVisible()
        self.details.setVisible(shown)
        self.toggle.setText("Hide details" if shown else "Show details")
        self.adjustSize()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class ErrorReporter(QObject):
    """Owns the window's error dialog; `report` may be called from any thread."""

    _posted = Signal(str, str)

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.dialog: ErrorDialog | None = None
        self._posted.connect(self.show_error, Qt.ConnectionType.QueuedConnection)

    def report(self, message: str, details: str) -> None:
        if threading.current_thread() is threading.main_thread():
            self.show_error(message, details)
        else:
            self._posted.emit(message, details)

    def show_error(self, message: str, details: str) -> ErrorDialog:
        if self.dialog is None or not self.dialog.isVisible():
            self.dialog = ErrorDialog(self.window)
        self.dialog.add_error(message, details)
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def job_failed(self, exc: BaseException, kind: str = "") -> None:
        """A worker job's unexpected exception (already logged by the worker)."""
        what = f"The {kind} task failed" if kind else "A background task failed"
        self.report(f"{what}: {type(exc).__name__}: {exc}", details_of(exc))


def install_excepthook(window) -> ErrorReporter:
    """Route the UI thread's uncaught exceptions and worker jobs' unexpected failures to a dialog.

    The previous hooks still run after ours (a terminal keeps its traceback; pytest-qt still
    sees the error); they are restored when the window is destroyed.
    """
    reporter = ErrorReporter(window)
    previous, previous_thread = sys.excepthook, threading.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if not issubclass(kind, KeyboardInterrupt):
            log.critical("uncaught exception", exc_info=(kind, exc, tb))
            try:
                reporter.report(f"{kind.__name__}: {exc}", "".join(traceback.format_exception(kind, exc, tb)))
            except RuntimeError:  # the window is gone (shutting down): the log and the terminal have it
                log.debug("no window left to show the error in")
        previous(kind, exc, tb)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is not SystemExit and args.exc_value is not None:
            log.critical("uncaught exception in thread %s", getattr(args.thread, "name", "?"),
                         exc_info=(args.exc_type, args.exc_value, args.exc_traceback))
            try:
                reporter.report(f"{args.exc_type.__name__} in a background thread: {args.exc_value}",
                                "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback)))
            except RuntimeError:
                log.debug("no window left to show the error in")
        previous_thread(args)

    def restore() -> None:
        if sys.excepthook is hook:
            sys.excepthook = previous
        if threading.excepthook is thread_hook:
            threading.excepthook = previous_thread

    sys.excepthook, threading.excepthook = hook, thread_hook
    window.destroyed.connect(restore)
    for host in (window.host, window.aux):
        host.unexpected.connect(reporter.job_failed)
    window.error_reporter = reporter
    window.restore_excepthook = restore
    return reporter
