"""The research pane's scope line (issue 53): what the next question may read, one click to clear.

"Within: all papers  [Choose ▾]" — the menu offers the papers selected in the library, each tag
and each collection (Zotero's among them); a scoped question shows "Within: tag “robust”  ✕".
The scope goes with the question to the core, which narrows every search to it.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QToolButton, QWidget

from app.core.desk import Scope, scope_labels
from app.core.records import Paper

from ..common import theme
from ..library.labels_dialog import edit_labels


class ScopeBar(QWidget):
    changed = Signal(object)  # Scope | None

    def __init__(self, papers: Callable[[], list[Paper]], selected: Callable[[], list[str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._papers = papers  # the library's papers (for the tags and collections offered)
        self._selected = selected  # ids selected in the library pane
        self.scope: Scope | None = None
        row = QHBoxLayout(self)
        row.setContentsMargins(2, 0, 0, 0)
        row.setSpacing(6)
        caption = QLabel("Within:")
        caption.setObjectName("muted")
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.clear_button = QToolButton()
        self.clear_button.setObjectName("flat")
        self.clear_button.setIcon(theme.icon("close", 14))
        self.clear_button.setToolTip("Clear the scope: ask the whole library")
        self.clear_button.setAccessibleName("Clear the scope")
        self.clear_button.clicked.connect(lambda: self.set_scope(None))
        self.choose_button = QToolButton()
        self.choose_button.setText("Choose… ▾")
        self.choose_button.setStyleSheet("QToolButton::menu-indicator { image: none; width: 0px; }")
        self.choose_button.setToolTip("Ask within the papers selected in the library, a tag or a collection")
        self.choose_button.setAccessibleName("Choose the papers the question may read")
        self.choose_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self.choose_button)
        self.menu.aboutToShow.connect(self.fill_menu)
        self.choose_button.setMenu(self.menu)
        for w in (caption, self.label, self.clear_button, self.choose_button):
            row.addWidget(w)
        row.addStretch(1)
        self.set_scope(None)

    def set_scope(self, scope: Scope | None) -> None:
        self.scope = None if scope is None or scope.empty else scope
        self.label.setText(self.scope.describe() if self.scope else "all papers")
        self.label.setObjectName("" if self.scope else "muted")
        self.label.setStyleSheet("font-weight: 600;" if self.scope else "")
        self.label.setToolTip("\n".join(self.scope.names or self.scope.papers) if self.scope and self.scope.papers else "")
        self.clear_button.setVisible(self.scope is not None)
        self.changed.emit(self.scope)

    def fill_menu(self) -> None:
        self.menu.clear()
        ids = self._selected()
        a = self.menu.addAction(f"Selected papers in the library ({len(ids)})", self.use_selected)
        a.setEnabled(bool(ids))
        tags, collections = scope_labels(self._papers())
        for title, values, make in (("Tag", tags, lambda v: Scope(tag=v)), ("Collection", collections, lambda v: Scope(collection=v))):
            sub = self.menu.addMenu(title)
            sub.setEnabled(bool(values))
            for value in values:
                sub.addAction(value, lambda v=value, make=make: self.set_scope(make(v)))
        if self.scope is not None:
            self.menu.addSeparator()
            self.menu.addAction("All papers (clear)", lambda: self.set_scope(None))

    def use_selected(self, ids: list[str] | None = None) -> None:
        ids = ids if ids is not None else self._selected()
        if ids:
            titles = {p.id: p.title for p in self._papers()}
            self.set_scope(Scope(papers=tuple(ids), names=tuple(titles.get(i, i) for i in ids)))


def add_scope_bar(window) -> ScopeBar:
    """The scope line under the research pane's controls; the questions run within it."""
    pane, research = window.research_pane, window.research
    bar = ScopeBar(window.library_pane.papers, window.library_pane.selected_ids, pane)
    layout = pane.layout()
    layout.insertWidget(layout.indexOf(pane.queue_label), bar)
    bar.changed.connect(lambda scope: setattr(research, "scope", scope))
    # A reopened (or finished) answer shows the scope it was asked in; Improve keeps it in the core.
    research.result_changed.connect(lambda result: bar.set_scope(Scope.from_dict(result.extra.get("scope"))))
    window.library_pane.scope_requested.connect(bar.use_selected)
    window.library_pane.labels_requested.connect(lambda ids: edit_labels(window, ids))
    return bar
