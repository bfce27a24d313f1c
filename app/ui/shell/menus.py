"""The window's menu bar: File, Edit, View, Library, Research, Help — every shortcut listed.

The menus reuse the window's own actions (Add papers, Add folder, Settings, Saved answers,
Ask, the library's Remove) so that one action has one shortcut. Keys that a pane handles
itself while it has the focus (Page Down in the PDF reader, Ctrl+Enter in the Draft form,
Delete in the paper list, the text fields' Copy/Paste) are shown on a menu item that does
the same from the menu, with a widget-only context, so that the key is never claimed twice
(two claims of one key make Qt ignore both).
"""

from __future__ import annotations

import logging
from typing import Callable

from PySide6.QtCore import QObject, Qt, QUrl
from PySide6.QtGui import QAction, QActionGroup, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QMenuBar

from app.core.desk import log_file

from .recent_libraries import RecentLibraries, is_uri

log = logging.getLogger(__name__)
Key = QKeySequence.StandardKey
PANE_KEYS_NOTE = "Works where the focus is; the menu item does the same."


class WindowMenus(QObject):
    """Builds the bar on `window`; keeps its actions by name (`actions`) for tests and state updates."""

    def __init__(self, window, window_settings: Callable) -> None:
        super().__init__(window)
        self.w = window
        self.actions: dict[str, QAction] = {}
        self.recent = RecentLibraries(window_settings)
        bar: QMenuBar = window.menuBar()
        bar.setAccessibleName("Menu bar")
        self.menus = {title.strip("&"): bar.addMenu(title) for title in
                      ("&File", "&Edit", "&View", "&Library", "&Research", "&Help")}
        for menu in self.menus.values():
            menu.setAccessibleName(menu.title().strip("&") + " menu")
        self._file()
        self._edit()
        self._view()
        self._library()
        self._research()
        self._help()
        window.library.snapshot_loaded.connect(lambda snap: self.recent.add(snap.location))

    # -- helpers --------------------------------------------------------------------------
    def _add(self, menu: QMenu, name: str, text: str, slot: Callable | None = None, keys=None, *,
             pane_key: bool = False, tip: str = "", action: QAction | None = None) -> QAction:
        """`action` reused as is, or a new one; `pane_key`: the key is shown but a pane owns it."""
        if action is None:
            action = QAction(text, self.w)
            if slot is not None:
                action.triggered.connect(lambda _=False: slot())
        if keys is not None:
            action.setShortcuts(keys if isinstance(keys, Key) else [QKeySequence(k) for k in ([keys] if isinstance(keys, str) else keys)])
        if pane_key:
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            tip = tip or PANE_KEYS_NOTE
        if tip:
            action.setToolTip(tip)
            action.setStatusTip(tip)
        menu.addAction(action)
        self.actions[name] = action
        return action

    # -- File -----------------------------------------------------------------------------
    def _file(self) -> None:
        m, w = self.menus["File"], self.w
        self._add(m, "open_library", "Open library…", self.choose_library, "Ctrl+Shift+O",
                  tip="Open another library folder")
        self.recent_menu = m.addMenu("Open recent")
        self.recent_menu.setAccessibleName("Recent libraries")
        self.recent_menu.aboutToShow.connect(self.fill_recent)
        m.addSeparator()
        self._add(m, "add_papers", "", action=w.add_action)
        self._add(m, "add_folder", "", action=w.add_folder_action)
        m.addSeparator()
        self._add(m, "saved_answers", "", action=w.results_action)
        m.addSeparator()
        quit_action = self._add(m, "quit", "Quit", w.close, Key.Quit)
        quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        if quit_action.shortcut().isEmpty():
            quit_action.setShortcut(QKeySequence("Ctrl+Q"))

    def fill_recent(self) -> None:
        self.recent.fill(self.recent_menu, self.open_library, self.w.library.location)

    def choose_library(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.w, "Open a library folder (a new, empty folder starts a new library)")
        if folder:
            self.open_library(folder)

    def open_library(self, location: str) -> None:
        """Switch the window to the library at `location` (a folder or a URI)."""
        from .recent_libraries import normalise

        location = location if is_uri(location) else normalise(location)
        log.info("opening the library %s", location)
        self.w.library_flag = location
        self.w.apply_settings(self.w.settings)  # reopens the worker's Desk on the library flag

    # -- Edit -----------------------------------------------------------------------------
    def _edit(self) -> None:
        m, w = self.menus["Edit"], self.w
        for item in (("undo", "Undo", Key.Undo, "undo"), ("redo", "Redo", Key.Redo, "redo"), None,
                     ("cut", "Cut", Key.Cut, "cut"), ("copy", "Copy", Key.Copy, "copy"),
                     ("paste", "Paste", Key.Paste, "paste"), ("select_all", "Select all", Key.SelectAll, "selectAll")):
            if item is None:
                m.addSeparator()
                continue
            name, text, key, slot = item
            self._add(m, name, text, lambda s=slot: _to_focus(s), key, pane_key=True)
        m.aboutToShow.connect(self._edit_state)
        m.addSeparator()
        settings = self._add(m, "settings", "", action=w.settings_action)
        settings.setMenuRole(QAction.MenuRole.PreferencesRole)
        if settings.shortcut().isEmpty():  # no platform key for Preferences (GNOME, offscreen)
            settings.setShortcut(QKeySequence("Ctrl+,"))

    def _edit_state(self) -> None:
        focus = QApplication.focusWidget()
        for name, slot in (("undo", "undo"), ("redo", "redo"), ("cut", "cut"), ("copy", "copy"),
                           ("paste", "paste"), ("select_all", "selectAll")):
            self.actions[name].setEnabled(focus is not None and hasattr(focus, slot))

    # -- View -----------------------------------------------------------------------------
    def _view(self) -> None:
        m, w = self.menus["View"], self.w
        for n, name in enumerate(("Research", "Draft", "Check")):
            self._add(m, f"tab_{name.lower()}", f"{name} tab", lambda i=n: w.work_tabs.setCurrentIndex(i), f"Ctrl+{n + 1}")
        m.addSeparator()
        self._add(m, "show_summary", "Summary && notes of the selected paper", lambda: self._selected(w.show_paper))
        self._add(m, "close_reader", "Close the reader", w.reader.hide, "Ctrl+W")
        m.addSeparator()
        viewer = w.pdf_viewer
        pdf = m.addMenu("PDF")  # the viewer's own keys (viewer_keys.py) work where the focus is in the viewer
        pdf.setAccessibleName("PDF menu")
        self._add(pdf, "find_in_pdf", "Find in the PDF…", viewer.find_bar.open_bar, "Ctrl+F", pane_key=True,
                  tip="Ctrl+F in the viewer; elsewhere Ctrl+F filters the papers")
        for name, text in (("find_next", "Next match"), ("find_previous", "Previous match"), ("next_page", "Next PDF page"),
                           ("previous_page", "Previous PDF page"), ("first_page", "First PDF page"),
                           ("last_page", "Last PDF page"), ("go_to_page", "Go to page…"), ("close_find", "Close the find bar")):
            keys = viewer.shortcuts[name.replace("_", " ")]
            self._add(pdf, name, text, keys[0].activated.emit, [k.key().toString() for k in keys], pane_key=True)
        self._add(pdf, "zoom_in", "Zoom PDF in", lambda: viewer.zoom_by(1.2), ["Ctrl++", "Ctrl+="])
        self._add(pdf, "zoom_out", "Zoom PDF out", lambda: viewer.zoom_by(1 / 1.2), Key.ZoomOut)
        self._add(pdf, "fit_width", "Fit PDF to width", viewer.fit_width, "Ctrl+0")
        m.addSeparator()
        full = self._add(m, "full_screen", "Full screen", self._toggle_full_screen, Key.FullScreen)
        if full.shortcut().isEmpty():
            full.setShortcut(QKeySequence("F11"))
        m.aboutToShow.connect(self._view_state)

    def _view_state(self) -> None:
        shown = self.w.reader.isVisible()
        has_pdf = shown and self.w.pdf_viewer.current_page > 0
        for name in ("next_page", "previous_page", "zoom_in", "zoom_out", "fit_width", "find_in_pdf", "find_next", "find_previous",
                     "first_page", "last_page", "go_to_page", "close_find"):
            self.actions[name].setEnabled(has_pdf)
        self.actions["close_reader"].setEnabled(shown)
        self.actions["show_summary"].setEnabled(len(self.w.library_pane.selected_ids()) == 1)

    def _toggle_full_screen(self) -> None:
        self.w.showNormal() if self.w.isFullScreen() else self.w.showFullScreen()

    # -- Library --------------------------------------------------------------------------
    def _library(self) -> None:
        m, w = self.menus["Library"], self.w
        lp = w.library_pane
        self._add(m, "library_add_papers", "", action=w.add_action)
        self._add(m, "library_add_folder", "", action=w.add_folder_action)
        self._add(m, "from_zotero", "From Zotero…", lp.choose_zotero)
        self._add(m, "from_bibliography", "From BibTeX or RIS…", lp.choose_bibliography)
        m.addSeparator()
        self._add(m, "filter", "Filter papers", self._focus_filter, Key.Find)
        m.addSeparator()
        self._add(m, "open_pdf", "Open PDF", lambda: self._selected(w.open_pdf))
        self._add(m, "summarize", "Summarize selected", lambda: self._selection(lp.summarize_requested.emit))
        self._add(m, "reindex", "Re-index selected", lambda: self._selection(lp.reindex_requested.emit))
        self._add(m, "remove", "", action=lp.remove_action, pane_key=True, tip="Remove the selected papers (Delete in the list)")
        lp.remove_action.setText("Remove selected…")
        m.addSeparator()
        self._add(m, "rebuild", "Rebuild index", w.library.rebuild,
                  tip="Re-embed every paper with the current embedding model")
        self._add(m, "library_folder", "Show library folder", self._show_library_folder)
        m.aboutToShow.connect(self._library_state)

    def _library_state(self) -> None:
        ids = self.w.library_pane.selected_ids()
        busy = self.w.library.current is not None
        self.actions["open_pdf"].setEnabled(len(ids) == 1)
        for name in ("summarize", "reindex", "remove"):
            self.actions[name].setEnabled(bool(ids) and not busy)
        self.actions["rebuild"].setEnabled(not busy)
        self.actions["library_folder"].setEnabled(not is_uri(self.w.library.location or ""))

    def _selection(self, emit: Callable[[list], None]) -> None:
        ids = self.w.library_pane.selected_ids()
        if ids:
            emit(ids)

    def _selected(self, show: Callable[[str], object]) -> None:
        ids = self.w.library_pane.selected_ids()
        if len(ids) == 1:
            show(ids[0])

    def _focus_filter(self) -> None:
        viewer = self.w.pdf_viewer  # one claim of Ctrl+F (two would cancel out): in the viewer it finds in the PDF
        if viewer.isAncestorOf(QApplication.focusWidget()) and viewer.path is not None:
            viewer.find_bar.open_bar()
            return
        box = self.w.library_pane.filter
        if box.isVisible():
            box.setFocus(Qt.FocusReason.ShortcutFocusReason)
            box.selectAll()

    def _show_library_folder(self) -> None:
        location = self.w.library.location
        if location and not is_uri(location):
            QDesktopServices.openUrl(QUrl.fromLocalFile(location))

    # -- Research -------------------------------------------------------------------------
    def _research(self) -> None:
        m, w = self.menus["Research"], self.w
        rp, av = w.research_pane, w.answer_view
        self._add(m, "ask", "", action=w.ask_action)
        w.ask_action.setText("Ask a question")
        # Enter in the question box runs it; not a menu key (Enter in an open menu picks its item).
        self._add(m, "run", "Run the question", rp.run_button.click, tip="Run the question (Enter in the question box)")
        self._add(m, "cancel", "Cancel", w.research.cancel)
        modes = QActionGroup(self)
        for mode, text in (("standard", "Standard research"), ("deep", "Deep research")):
            a = self._add(m, f"mode_{mode}", text, lambda mo=mode: rp.set_mode(mo))
            a.setCheckable(True)
            modes.addAction(a)
        m.addSeparator()
        self._add(m, "improve", "Improve the answer…", av.improve_button.click)
        self._add(m, "save_answer", "Save the answer", av.save_button.click, Key.Save)
        self._add(m, "export_markdown", "Export as Markdown…", lambda: av.export_requested.emit("markdown"))
        self._add(m, "export_bibtex", "Export cited papers as BibTeX…", lambda: av.export_requested.emit("bibtex"))
        self._add(m, "export_html", "Share as web page…", lambda: av.export_requested.emit("html"),
                  tip="One HTML file with the answer and a highlighted crop of every cited page (more in the Export menu)")
        self._add(m, "copy_answer", "Copy the answer", av.copy_button.click)
        m.addSeparator()
        self._add(m, "draft", "Draft a section", self._draft, ["Ctrl+Return", "Ctrl+Enter"], pane_key=True,
                  tip="Write the section described in the Draft tab (Ctrl+Enter there)")
        self._add(m, "check", "Check a manuscript…", lambda: w.work_tabs.setCurrentIndex(2))
        m.aboutToShow.connect(self._research_state)

    def _research_state(self) -> None:
        w, av = self.w, self.w.answer_view
        running = w.research.current is not None
        self.actions["cancel"].setEnabled(running)
        self.actions["run"].setEnabled(w.research_pane.run_button.isEnabled())
        self.actions[f"mode_{w.research_pane.mode}"].setChecked(True)
        for name, button in (("improve", av.improve_button), ("save_answer", av.save_button),
                             ("export_markdown", av.export_button), ("export_bibtex", av.export_button),
                             ("export_html", av.export_button), ("copy_answer", av.copy_button)):
            self.actions[name].setEnabled(button.isEnabled() and button.isVisible())

    def _draft(self) -> None:
        self.w.work_tabs.setCurrentWidget(self.w.draft_pane)
        if not self.w.draft_pane.running:
            self.w.draft_pane.draft_button.click()

    # -- Help -----------------------------------------------------------------------------
    def _help(self) -> None:
        m = self.menus["Help"]
        self._add(m, "copy_diagnostics", "Copy diagnostics", self.copy_diagnostics,
                  tip="Versions, system, settings without secrets and the last errors, for a bug report")
        self._add(m, "log_folder", "Open log folder", lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(log_file().parent))))
        m.addSeparator()
        about = self._add(m, "about", "About Research Desk", self.show_about)
        about.setMenuRole(QAction.MenuRole.AboutRole)
        self._add(m, "about_qt", "About Qt", QApplication.aboutQt).setMenuRole(QAction.MenuRole.AboutQtRole)

    def diagnostics(self) -> str:
        from app.about import diagnostics_report

        return diagnostics_report(self.w.settings, self.w.library.location)

    def copy_diagnostics(self) -> str:
        text = self.diagnostics()
        QGuiApplication.clipboard().setText(text)
        self.w.statusBar().showMessage("Diagnostics copied to the clipboard (no keys or passwords in them).", 6000)
        return text

    def show_about(self):
        from .about_dialog import AboutDialog

        dialog = AboutDialog(self.w.settings, self.w)
        dialog.open()
        self.about_dialog = dialog
        return dialog


def _to_focus(slot: str) -> None:
    """Edit → Copy etc.: the focused widget's own slot (text fields, the answer, the notes)."""
    focus = QApplication.focusWidget()
    fn = getattr(focus, slot, None)
    if callable(fn):
        fn()


def menu_shortcuts(bar: QMenuBar) -> dict[str, str]:
    """{key sequence: action text} of every action under the bar's menus (for the shortcut test)."""
    found: dict[str, str] = {}

    def walk(menu: QMenu) -> None:
        for action in menu.actions():
            if action.menu() is not None:
                walk(action.menu())
            for seq in action.shortcuts():
                found.setdefault(seq.toString(QKeySequence.SequenceFormat.PortableText), action.text())

    for action in bar.actions():
        if action.menu() is not None:
            walk(action.menu())
    return found

