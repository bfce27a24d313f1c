"""Accessible names and descriptions for every control a screen reader or keyboard user meets.

Qt gives a screen reader a button's text, but nothing for an icon-only button, a line edit
(its placeholder is not a name), a combo or spin box beside a label, a list or a tab bar. Every
control of a window gets its name here from what a sighted user reads: its text, the label
that names it (a QLabel's buddy, its row in a form), its placeholder, or its tooltip; the
tooltip becomes the description where it says more. A name set by the pane itself is kept.

`unnamed(root)` lists the controls still without a name: the walk test fails on any of them,
so a new control needs a text, a label or a tooltip (or its own setAccessibleName).
"""

from __future__ import annotations

import re

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QComboBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollBar,
    QTabBar,
    QTableView,
    QTabWidget,
    QTextEdit,
    QWidget,
)

# What a user can focus, click or type into.
INTERACTIVE = (QAbstractButton, QLineEdit, QTextEdit, QPlainTextEdit, QComboBox, QAbstractSpinBox,
               QAbstractItemView, QTabBar, QTabWidget, QAbstractSlider)
# A control's own parts (a combo's popup list, a spin box's line edit, a line edit's clear button,
# a view's scroll bars and header) are read as that control: they need no name of their own.
_PARTS_OF = (QComboBox, QLineEdit, QAbstractSpinBox, QAbstractItemView, QTextEdit, QPlainTextEdit)
_TAGS = re.compile(r"<[^>]+>")


def controls(root: QWidget) -> list[QWidget]:
    """The interactive controls under `root` a user meets (not the parts Qt builds inside one)."""
    found = []
    for widget in root.findChildren(QWidget):
        if not isinstance(widget, INTERACTIVE) or isinstance(widget, (QScrollBar, QHeaderView)):
            continue
        if widget.objectName().startswith("qt_"):  # Qt's own (a toolbar's overflow button, a table's corner)
            continue
        parent = widget.parentWidget()
        while parent is not None and parent is not root and not isinstance(parent, _PARTS_OF):
            parent = parent.parentWidget()
        if parent is None or parent is root:
            found.append(widget)
    return found


def _plain(text: str) -> str:
    text = _TAGS.sub(" ", text or "").replace("&&", "\0").replace("&", "").replace("\0", "&")
    return " ".join(text.split()).rstrip(":").strip()


def _first_sentence(text: str) -> str:
    text = _plain(text)
    cut = re.split(r"(?<=[.!?])\s|\s\(", text, maxsplit=1)[0]
    return cut.rstrip(".") if len(cut) <= 80 else cut[:77].rstrip() + "…"


def _key(widget: QWidget) -> int:
    """The C++ object's address: Python wrappers of one widget may differ (a buddy() returned anew)."""
    return shiboken6.getCppPointer(widget)[0]


def _labels(root: QWidget) -> dict[int, str]:
    """Text of the label that names each field: a QLabel's buddy, or the field's form row."""
    found: dict[int, str] = {}
    for label in root.findChildren(QLabel):
        if label.buddy() is not None and _plain(label.text()):
            found[_key(label.buddy())] = _plain(label.text())
    for form in root.findChildren(QFormLayout):
        for row in range(form.rowCount()):
            label = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            field = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
            if label is None or field is None or not isinstance(label.widget(), QLabel):
                continue
            target = field.widget()
            if target is None and field.layout() is not None and field.layout().count():
                target = field.layout().itemAt(0).widget()  # a field with a button beside it
            name = _plain(label.widget().text())
            if target is not None and not isinstance(target, INTERACTIVE):
                # A holder of the field and its unit ("700 tokens") or of two fields ("2 to 6"):
                # the first takes the row's label, a later one the label and the word before it.
                words = ""
                for part in (target.layout().itemAt(i).widget() for i in range(target.layout().count())) if target.layout() else ():
                    if isinstance(part, QLabel):
                        words = _plain(part.text())
                    elif isinstance(part, INTERACTIVE):
                        found.setdefault(_key(part), f"{name}, {words}" if words and _key(part) != _key(controls(target)[0]) else name)
                continue
            if target is not None:
                found.setdefault(_key(target), name)
    return found


def _derived_name(widget: QWidget, labels: dict[int, str]) -> str:
    if isinstance(widget, QAbstractButton) and _plain(widget.text()):
        return _plain(widget.text())
    if _key(widget) in labels:
        return labels[_key(widget)]
    if isinstance(widget, QLineEdit) and widget.placeholderText():
        return _first_sentence(widget.placeholderText())
    if isinstance(widget, (QTextEdit, QPlainTextEdit)) and widget.placeholderText():
        return _first_sentence(widget.placeholderText())
    if widget.toolTip():
        return _first_sentence(widget.toolTip())
    if isinstance(widget, QTabBar) and isinstance(widget.parent(), QTabWidget):
        return widget.parent().accessibleName()
    model = widget.model() if isinstance(widget, QAbstractItemView) else None
    if model is not None and model.columnCount() > 1:  # a table: named by its columns
        headers = [_plain(str(model.headerData(c, Qt.Orientation.Horizontal) or "")) for c in range(model.columnCount())]
        if any(headers):
            return "Table of " + ", ".join(h for h in headers if h)
    if model is not None:  # a list or a table not filled yet: named by the tab it is on
        page = widget
        while page.parentWidget() is not None and not isinstance(page.parentWidget().parentWidget(), QTabWidget):
            page = page.parentWidget()
        tabs = page.parentWidget().parentWidget() if page.parentWidget() is not None else None
        if isinstance(tabs, QTabWidget) and tabs.indexOf(page) >= 0:
            return f"{_plain(tabs.tabText(tabs.indexOf(page)))}: results"
    return ""


def name_controls(root: QWidget) -> None:
    """Give every interactive control under `root` (and root) a name, and its tooltip as description."""
    labels = _labels(root)
    widgets = [root, *controls(root)] if isinstance(root, INTERACTIVE) else controls(root)
    # Tab widgets first: their tab bar is named after them.
    for widget in sorted(widgets, key=lambda w: not isinstance(w, QTabWidget)):
        if not widget.accessibleName():
            if isinstance(widget, QTabWidget):
                tabs = [_plain(widget.tabText(i)) for i in range(widget.count())]
                name = (widget.toolTip() and _first_sentence(widget.toolTip())) or " / ".join(t for t in tabs if t) + " tabs"
            else:
                name = _derived_name(widget, labels)
            if name:
                widget.setAccessibleName(name)
        tip = _plain(widget.toolTip())
        if tip and not widget.accessibleDescription() and tip != widget.accessibleName():
            widget.setAccessibleDescription(tip)


def unnamed(root: QWidget) -> list[QWidget]:
    """The interactive controls under `root` without an accessible name."""
    return [w for w in controls(root) if not w.accessibleName().strip()]


# Controls whose text, label or tooltip would not say what they hold: named by the window's
# attribute path (a path that no longer resolves is skipped, and the walk test then names the control).
WINDOW_NAMES = {
    "library_pane.table": ("Papers in the library", "Enter opens the PDF; Delete removes; the context menu key shows more"),
    "research_pane.papers": ("Papers consulted for the answer", "Enter shows the paper's summary"),
    "research_pane.evidence": ("Evidence passages", "Enter opens the passage at its page in the PDF"),
    "answer_view.browser": ("Answer", "Tab moves from citation to citation; Enter opens the cited page"),
    "paper_panel.summary": ("Summary of the paper", ""),
    "checker.tab.view": ("Manuscript, its citations marked by verdict",
                         "Tab moves from citation to citation; Enter opens the cited page"),
    "checker.tab.problems": ("Problems found in the manuscript", ""),
    "draft_pane.view.browser": ("Drafted section", "Tab moves from citation to citation; Enter opens the cited page"),
    "draft_pane.view.ledger": ("Evidence ledger: each citation's quote", ""),
    "draft_pane.progress.searches": ("Searches made for the section", ""),
}


def name_window(window: QWidget) -> None:
    """The named controls above, then every other control of the window from what it shows."""
    for path, (name, description) in WINDOW_NAMES.items():
        target = window
        for part in path.split("."):
            target = getattr(target, part, None)
        if isinstance(target, QWidget):
            if not target.accessibleName():
                target.setAccessibleName(name)
            if description and not target.accessibleDescription():
                target.setAccessibleDescription(description)
    name_controls(window)
    # Tab leaves a table (arrows move between its cells): with Qt's default a keyboard user is held
    # in the first table Tab reaches (the papers), cell after cell, and never gets to the panes beyond.
    for table in window.findChildren(QTableView):
        table.setTabKeyNavigation(False)


def name_on_focus(app) -> None:
    """Name the controls of any window (a dialog, a pane built later) when the focus enters it;
    a window is walked again only when it has gained widgets since."""
    seen: dict[int, int] = {}

    def focus_changed(_old, new) -> None:
        if new is None:
            return
        top = new.window()
        count = len(top.findChildren(QWidget))
        if seen.get(id(top)) != count:
            seen[id(top)] = count
            name_controls(top)

    app.focusChanged.connect(focus_changed)
