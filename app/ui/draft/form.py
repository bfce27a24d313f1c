"""The Draft tab's form: which section, the description of the user's own work,
and the time budget; load/save the description as a YAML/JSON context file.

The form never builds a DraftContext by hand: the core's `context_from_dict`
validates it, exactly as it validates a context file for the CLI, so the two
cannot drift. Its one UI rule is the inline "concept is required" message.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.desk import SECTIONS, ContextError, DraftContext, context_from_dict, load_context

from ..common import theme
from ..common.banners import Banner

UNLIMITED = 0  # the time budget spin box's special value, as in the research pane
DEFAULT_MINUTES = 5
FILE_FILTER = "Context files (*.yaml *.yml *.json);;All files (*)"
CONCEPT_REQUIRED = "Describe your work in a sentence or two: the concept is required to draft a section."

# key, label, placeholder, visible lines
FIELDS: tuple[tuple[str, str, str, int], ...] = (
    ("concept", "Concept", "What your work is about, in one or two sentences (required)", 3),
    ("open_questions", "Open questions", "What is not known yet, that your work addresses", 2),
    ("hypothesis", "Hypothesis", "What you expect, and why", 2),
    ("method", "Method", "How you test it: data, design, models, evaluation", 2),
    ("results", "Results / metrics", "What you found: numbers, comparisons, plots described", 2),
    ("verdict", "Verdict", "What the results mean for the hypothesis", 2),
)


class ContextField(QPlainTextEdit):
    """A multi-line field that grows with its text (up to MAX_LINES), so a loaded
    description can be read whole; the form scrolls instead. Tab moves on."""

    MAX_LINES = 8
    PADDING = 22  # frame, stylesheet padding and document margins (measured: less shows a scroll bar)

    def __init__(self, placeholder: str, lines: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.min_lines = lines
        self.setPlaceholderText(placeholder)
        self.setTabChangesFocus(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.textChanged.connect(self._fit)
        self._fit()

    def text(self) -> str:
        return self.toPlainText()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self._fit()  # rewrapped: the line count may have changed

    def _fit(self) -> None:
        metrics = self.fontMetrics()
        spacing = metrics.lineSpacing()
        width = max(40, self.viewport().width() - 2 * int(self.document().documentMargin()))
        text = self.toPlainText() or " "
        needed = metrics.boundingRect(0, 0, width, 100_000, int(Qt.TextFlag.TextWordWrap), text).height()
        height = min(max(needed, spacing * self.min_lines), spacing * self.MAX_LINES) + self.PADDING
        if height != self.height():
            self.setFixedHeight(height)


class DraftForm(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.last_dir = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)

        self.banner = Banner()  # context file problems: the core's message and hint
        layout.addWidget(self.banner)

        # Labels beside the two short controls keep the column narrow.
        top = QGridLayout()
        top.setHorizontalSpacing(10)
        top.setVerticalSpacing(6)
        self.section = QComboBox()
        for key, title in SECTIONS.items():
            self.section.addItem(title, key)
        self.section.setToolTip("Which section of your paper to draft")
        self.budget = QSpinBox()
        self.budget.setRange(UNLIMITED, 240)
        self.budget.setValue(DEFAULT_MINUTES)
        self.budget.setSuffix(" min")
        self.budget.setSpecialValueText("Unlimited")
        self.budget.setToolTip("How long the draft may take in all: searching, then writing (0 = unlimited)")
        top.addWidget(_caption("Section"), 0, 0)
        top.addWidget(self.section, 0, 1)
        top.addWidget(_caption("Time budget"), 1, 0)
        top.addWidget(self.budget, 1, 1)
        top.setColumnStretch(1, 1)
        layout.addLayout(top)

        self.fields: dict[str, ContextField] = {}
        self.labels: dict[str, QLabel] = {}
        for key, label, placeholder, lines in FIELDS:
            caption = _caption(label + (" *" if key == "concept" else ""))
            field = ContextField(placeholder, lines)
            field.textChanged.connect(self.changed)
            layout.addSpacing(4)
            layout.addWidget(caption)
            layout.addWidget(field)
            self.fields[key], self.labels[key] = field, caption
            if key == "concept":
                self.concept_error = QLabel(CONCEPT_REQUIRED)
                self.concept_error.setWordWrap(True)
                self.concept_error.hide()
                layout.addWidget(self.concept_error)
                field.textChanged.connect(self._concept_edited)

        files = QHBoxLayout()
        files.setSpacing(6)
        self.load_button = QPushButton(theme.icon("folder", 16), "Load from file…")
        self.load_button.setToolTip("Fill the form from a YAML or JSON context file (the CLI's --context format)")
        self.load_button.clicked.connect(self.choose_file)
        self.save_button = QPushButton(theme.icon("save", 16), "Save as file…")
        self.save_button.setToolTip("Save the description as a YAML context file (usable with `research-desk draft`)")
        self.save_button.clicked.connect(self.choose_save_path)
        files.addWidget(self.load_button)
        files.addWidget(self.save_button)
        files.addStretch(1)
        layout.addSpacing(6)
        layout.addLayout(files)

    # -- values -------------------------------------------------------------------------
    @property
    def section_key(self) -> str:
        return str(self.section.currentData())

    def set_section(self, key: str) -> None:
        index = self.section.findData(key)
        if index >= 0:
            self.section.setCurrentIndex(index)

    def time_minutes(self) -> float | None:
        return None if self.budget.value() == UNLIMITED else float(self.budget.value())

    def values(self) -> dict[str, str]:
        return {key: field.text().strip() for key, field in self.fields.items()}

    def context(self) -> DraftContext:
        """The form as the core's DraftContext; raises ContextError (e.g. no concept)."""
        return context_from_dict({k: v for k, v in self.values().items() if v}, "The form")

    def validate(self) -> DraftContext | None:
        """The context, or None with the reason shown next to the field."""
        if not self.fields["concept"].text().strip():
            self.concept_error.setText(CONCEPT_REQUIRED)
            self._mark_concept(True)
            self.fields["concept"].setFocus()
            return None
        try:
            return self.context()
        except ContextError as exc:
            self.banner.show_error(exc)
            return None

    def set_context(self, context: DraftContext) -> None:
        for key, field in self.fields.items():
            field.setPlainText(context.get(key))
        self._mark_concept(False)

    # -- files --------------------------------------------------------------------------
    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load a context file", self.last_dir or str(Path.home()), FILE_FILTER)
        if path:
            self.load_file(path)

    def load_file(self, path: str | Path) -> bool:
        """Fill the form from a context file; a bad file leaves the form as it was."""
        self.last_dir = str(Path(path).parent)
        try:
            context = load_context(path)
        except ContextError as exc:
            self.banner.show_error(exc)
            return False
        self.set_context(context)
        self.banner.show_message("info", f"Loaded {Path(path).name}", "Filled in: " + ", ".join(_present_labels(context)) + ".")
        return True

    def choose_save_path(self) -> None:
        context = self.validate()
        if context is None:
            return
        start = str(Path(self.last_dir or Path.home()) / f"{self.section_key}-context.yaml")
        path, _ = QFileDialog.getSaveFileName(self, "Save the context file", start, FILE_FILTER)
        if path:
            self.save_file(path, context)

    def save_file(self, path: str | Path, context: DraftContext | None = None) -> bool:
        import json

        import yaml

        context = context or self.validate()
        if context is None:
            return False
        path = Path(path)
        self.last_dir = str(path.parent)
        data = context.to_dict()
        if path.suffix.lower() == ".json":
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        else:
            head = f"# Research Desk draft context: research-desk draft {self.section_key} --context {path.name}\n"
            text = head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=88)
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.banner.show_message("error", f"Could not save {path.name}.", str(exc))
            return False
        self.banner.show_message("info", f"Saved {path.name}", str(path))
        return True

    # -- state between sessions ----------------------------------------------------------
    def state(self) -> dict[str, str]:
        return {"section": self.section_key, "minutes": str(self.budget.value()), "last_dir": self.last_dir, **self.values()}

    def restore(self, state: dict) -> None:
        self.set_section(str(state.get("section") or "introduction"))
        try:
            self.budget.setValue(int(state.get("minutes", DEFAULT_MINUTES)))
        except (TypeError, ValueError):
            self.budget.setValue(DEFAULT_MINUTES)
        self.last_dir = str(state.get("last_dir") or "")
        for key, field in self.fields.items():
            field.setPlainText(str(state.get(key) or ""))

    # -- the inline concept message --------------------------------------------------------
    def _concept_edited(self) -> None:
        if self.concept_error.isVisible() and self.fields["concept"].text().strip():
            self._mark_concept(False)

    def _mark_concept(self, invalid: bool) -> None:
        self.concept_error.setVisible(invalid)
        color = theme.colors()["bad"]  # looked up now: the theme may have changed since start-up
        self.concept_error.setStyleSheet(f"color: {color};")
        self.fields["concept"].setStyleSheet(f"QPlainTextEdit {{ border: 1px solid {color}; }}" if invalid else "")


def _caption(text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName("sectionTitle")
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    return label


def _present_labels(context: DraftContext) -> list[str]:
    labels = dict((k, label) for k, label, _p, _n in FIELDS)
    return [labels[k] for k in context.present()]
