"""Help → About: the app's version, the models it is set to use, and the libraries it runs on.

The same versions as `research-desk --version` (app/about.py), plus the models and where the
log file is; "Copy" puts the lot on the clipboard as plain text for a bug report.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, QTimer, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.about import APP_NAME, app_version, component_versions, model_lines, system_line
from app.core.desk import log_file, mask_text

from ..common import theme

BLURB = "Cited answers from your PDF library, offline: a local model reads your papers and every citation opens the page it rests on."


class AboutDialog(QDialog):
    def __init__(self, settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"About {APP_NAME}")
        self.setAccessibleName(f"About {APP_NAME}")
        self.version = app_version()
        self.rows = [("Research Desk", self.version)]
        self.rows += [(role, mask_text(text)) for role, text in model_lines(settings)]
        self.rows += component_versions()
        self.rows += [("System", system_line()), ("Log file", str(log_file()))]

        icon = QLabel()
        icon.setPixmap(theme.app_icon().pixmap(72, 72))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        icon.setAccessibleName("Research Desk icon")
        title = QLabel(f"<span style='font-size: 17pt; font-weight: 600;'>{APP_NAME}</span><br>"
                       f"<span>Version {escape(self.version)}</span>")
        title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        title.setAccessibleName("Name and version")
        blurb = QLabel(BLURB)
        blurb.setWordWrap(True)
        blurb.setObjectName("muted")
        head_text = QVBoxLayout()
        head_text.addWidget(title)
        head_text.addWidget(blurb)
        head = QHBoxLayout()
        head.addWidget(icon)
        head.addSpacing(8)
        head.addLayout(head_text, 1)

        self.table = QLabel(self._table_html())
        self.table.setTextFormat(Qt.TextFormat.RichText)
        self.table.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table.setWordWrap(True)
        self.table.setAccessibleName("Versions of the app, its models and libraries")

        buttons = QDialogButtonBox()
        self.copy_button = QPushButton("Copy")
        self.copy_button.setAccessibleName("Copy the versions")
        self.copy_button.setToolTip("Copy the versions as text, for a bug report")
        self.copy_button.clicked.connect(self.copy)
        logs = QPushButton("Open log folder")
        logs.setAccessibleName("Open the log folder")
        logs.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(log_file().parent))))
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        close.setAccessibleName("Close")
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(logs, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 18, 20, 14)
        layout.addLayout(head)
        layout.addSpacing(6)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.setMinimumWidth(560)

    def _table_html(self) -> str:
        cells = "".join(
            f"<tr><td style='padding: 2px 14px 2px 0; white-space: nowrap;'><b>{escape(name)}</b></td>"
            f"<td style='padding: 2px 0;'>{escape(value)}</td></tr>"
            for name, value in self.rows)
        return f"<table cellspacing='0'>{cells}</table>"

    def text(self) -> str:
        return "\n".join(f"{name}: {value}" for name, value in self.rows)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())
        self.copy_button.setText("Copied")
        QTimer.singleShot(2000, self, lambda: self.copy_button.setText("Copy"))
