"""Light/dark themes, the application stylesheet and themed icons.

Fusion is used everywhere so the app looks the same on every desktop and a
dark palette actually applies (native styles ignore parts of the palette).
The stylesheet in resources/styles/app.qss uses `@token` colours filled in
from the palette below; line icons are recoloured to the text colour.
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QBoxLayout, QPushButton

from app.core.paths import resources_dir

ICON_INK = "#1f2328"  # the stroke colour the line icons are drawn with

LIGHT = {
    "window": "#f6f7f9",
    "base": "#ffffff",
    "alt": "#f3f4f6",
    "text": "#1f2328",
    "muted": "#636c76",
    "border": "#d5d9de",
    "accent": "#2f62c9",
    "accent_text": "#ffffff",
    "highlight": "#dbe7ff",
    "ok": "#1a7f37",
    "warn": "#9a6700",
    "bad": "#cf222e",
    "info_bg": "#ddf4ff",
    "info_border": "#9fd0f5",
    "warn_bg": "#fff8c5",
    "warn_border": "#e8cf6a",
    "error_bg": "#ffebe9",
    "error_border": "#f4b5b0",
    "code_bg": "#f1f3f5",
    "pending": "#8c959f",
    "passage": "rgba(255, 200, 0, 90)",
}

DARK = {
    "window": "#1d2025",
    "base": "#24282e",
    "alt": "#2a2f36",
    "text": "#e6e8eb",
    "muted": "#9aa3ad",
    "border": "#3a4048",
    "accent": "#5b8def",
    "accent_text": "#ffffff",
    "highlight": "#2c4a80",
    "ok": "#3fb950",
    "warn": "#d29922",
    "bad": "#f85149",
    "info_bg": "#13304d",
    "info_border": "#1f5a8a",
    "warn_bg": "#3a2f0b",
    "warn_border": "#7a5d12",
    "error_bg": "#3d1619",
    "error_border": "#7d2a2f",
    "code_bg": "#2d323a",
    "pending": "#7d8590",
    "passage": "rgba(255, 200, 0, 80)",
}

_current: dict[str, str] = LIGHT
_current_name = "light"


def colors() -> dict[str, str]:
    return _current


def is_dark() -> bool:
    return _current_name == "dark"


def system_prefers_dark() -> bool:
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is not None:
        return scheme() == Qt.ColorScheme.Dark
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128


def resolve(theme: str) -> str:
    if theme in ("light", "dark"):
        return theme
    return "dark" if system_prefers_dark() else "light"


def apply_theme(app: QApplication, theme: str = "system") -> str:
    """Apply "system" | "light" | "dark"; returns the one in effect."""
    global _current, _current_name
    name = resolve(theme)
    _current_name = name
    _current = DARK if name == "dark" else LIGHT
    app.setStyle("Fusion")
    app.setPalette(_palette(_current))
    app.setStyleSheet(stylesheet())
    icon.cache_clear()
    return name


def _palette(c: dict[str, str]) -> QPalette:
    p = QPalette()
    role = QPalette.ColorRole
    p.setColor(role.Window, QColor(c["window"]))
    p.setColor(role.WindowText, QColor(c["text"]))
    p.setColor(role.Base, QColor(c["base"]))
    p.setColor(role.AlternateBase, QColor(c["alt"]))
    p.setColor(role.ToolTipBase, QColor(c["base"]))
    p.setColor(role.ToolTipText, QColor(c["text"]))
    p.setColor(role.PlaceholderText, QColor(c["muted"]))
    p.setColor(role.Text, QColor(c["text"]))
    p.setColor(role.Button, QColor(c["alt"]))
    p.setColor(role.ButtonText, QColor(c["text"]))
    p.setColor(role.BrightText, QColor(c["bad"]))
    p.setColor(role.Highlight, QColor(c["accent"]))
    p.setColor(role.HighlightedText, QColor(c["accent_text"]))
    p.setColor(role.Link, QColor(c["accent"]))
    p.setColor(role.LinkVisited, QColor(c["accent"]))
    p.setColor(role.Mid, QColor(c["border"]))
    p.setColor(role.Midlight, QColor(c["border"]))
    disabled = QPalette.ColorGroup.Disabled
    for r in (role.Text, role.ButtonText, role.WindowText):
        p.setColor(disabled, r, QColor(c["muted"]))
    return p


def stylesheet() -> str:
    qss = (resources_dir() / "styles" / "app.qss").read_text(encoding="utf-8")
    # Longest names first so "@warn_bg" is not read as "@warn" + "_bg".
    for key in sorted(_current, key=len, reverse=True):
        qss = qss.replace("@" + key, _current[key])
    return qss


def answer_css() -> str:
    """Stylesheet for the answer/summary HTML (QTextDocument's CSS subset)."""
    c = _current
    return f"""
    body {{ color: {c['text']}; }}
    h1 {{ font-size: 17pt; font-weight: 600; margin-top: 4px; margin-bottom: 8px; }}
    h2 {{ font-size: 13.5pt; font-weight: 600; margin-top: 14px; margin-bottom: 6px; }}
    h3 {{ font-size: 12pt; font-weight: 600; margin-top: 12px; margin-bottom: 4px; }}
    p {{ margin-top: 0px; margin-bottom: 9px; line-height: 135%; }}
    li {{ margin-bottom: 4px; line-height: 130%; }}
    code {{ background-color: {c['code_bg']}; font-family: monospace; }}
    pre {{ background-color: {c['code_bg']}; padding: 6px; font-family: monospace; }}
    blockquote {{ color: {c['muted']}; margin-left: 12px; }}
    a {{ color: {c['accent']}; text-decoration: none; }}
    a.cite {{ color: {c['accent']}; font-size: 9.5pt; }}
    a.pending {{ color: {c['pending']}; }}
    span.mark {{ font-size: 9.5pt; font-weight: 600; }}
    span.ok {{ color: {c['ok']}; }}
    span.warn {{ color: {c['warn']}; }}
    span.bad {{ color: {c['bad']}; }}
    span.partial {{ color: {c['warn']}; }}
    span.aside {{ color: {c['muted']}; }}
    a.aside {{ color: {c['muted']}; }}
    a.bad {{ color: {c['bad']}; }}
    a.partial {{ color: {c['warn']}; }}
    span.unbacked {{ background-color: {c['error_bg']}; }}
    span.quoted {{ font-style: italic; }}
    span.claim {{ font-size: 8.5pt; }}
    p.preview {{ color: {c['muted']}; margin-top: 12px; margin-bottom: 4px; }}
    ol.preview li {{ margin-bottom: 6px; }}
    h2.references {{ font-size: 12pt; margin-top: 18px; }}
    ol.references li {{ margin-bottom: 7px; }}
    span.meta {{ color: {c['muted']}; font-size: 9.5pt; }}
    p.cursor {{ color: {c['accent']}; }}
    p.muted {{ color: {c['muted']}; }}
    p.caution {{ color: {c['warn']}; font-weight: 600; }}
    table {{ border-collapse: collapse; }}
    th, td {{ border: 1px solid {c['border']}; padding: 3px 6px; }}
    """


@lru_cache(maxsize=256)
def icon(name: str, size: int = 24) -> QIcon:
    """A resources/icons SVG; line icons are recoloured for the current theme."""
    path = resources_dir() / "icons" / f"{name}.svg"
    try:
        svg = path.read_text(encoding="utf-8")
    except OSError:
        return QIcon()
    if ICON_INK in svg:
        normal = _svg_pixmap(svg.replace(ICON_INK, _current["text"]), size)
        disabled = _svg_pixmap(svg.replace(ICON_INK, _current["muted"]), size)
        result = QIcon()
        result.addPixmap(normal, QIcon.Mode.Normal)
        result.addPixmap(disabled, QIcon.Mode.Disabled)
        result.addPixmap(_svg_pixmap(svg.replace(ICON_INK, _current["accent_text"]), size), QIcon.Mode.Selected)
        return result
    return QIcon(_svg_pixmap(svg, size))


def _svg_pixmap(svg: str, size: int) -> QPixmap:
    ratio = 2.0  # draw at 2x so icons stay sharp on high-DPI screens
    pixmap = QPixmap(int(size * ratio), int(size * ratio))
    pixmap.fill(Qt.GlobalColor.transparent)
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size * ratio, size * ratio))
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


def app_icon() -> QIcon:
    path = resources_dir() / "icons" / "research-desk.svg"
    result = QIcon()
    svg = path.read_text(encoding="utf-8")
    for size in (16, 24, 32, 48, 64, 128, 256):
        result.addPixmap(_svg_pixmap(svg, size))
    return result


def header_button(row: QBoxLayout, icon_name: str, text: str, tip: str) -> QPushButton:
    """An icon button with a tooltip, added to a pane's header row (answer and draft views)."""
    button = QPushButton(icon(icon_name, 16), text)
    button.setToolTip(tip)
    row.addWidget(button)
    return button
