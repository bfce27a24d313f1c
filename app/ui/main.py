"""Entry point of the desktop app: `research-desk [PDF …]` (no subcommand) or `research-desk-gui`."""

from __future__ import annotations

import argparse
import logging
import signal
import sys

log = logging.getLogger(__name__)


def open_window(library: str | None = None, files: list[str] | None = None, settings=None):
    """The main window on `library` (or the configured one), shown; `files` (PDFs) are imported
    into that library through the window's worker and the first is shown when they are in."""
    from PySide6.QtWidgets import QApplication

    from app.core.desk import setup_logging
    from app.core.settings import Settings

    from .shell.error_dialog import install_excepthook
    from .shell.main_window import MainWindow
    from .shell.open_files import FileOpenEvents, import_and_show
    from .shell.single_instance import InstanceServer

    setup_logging(echo_warnings=True)  # idempotent: `research-desk` (the CLI) has done it already
    window = MainWindow(settings or Settings.load(), library)
    install_excepthook(window)
    window.instance_server = InstanceServer(window)  # later starts hand their PDFs to this window
    window.file_open_events = FileOpenEvents(window)  # macOS hands files to the running app
    QApplication.instance().installEventFilter(window.file_open_events)
    window.show()
    if files:
        import_and_show(window, files)
    return window


def run_app(library: str | None = None, argv: list[str] | None = None, files: list[str] | None = None) -> int:
    """Open the main window on `library` (or the configured one); returns the exit code."""
    from PySide6.QtCore import QCoreApplication, Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from app.about import app_version
    from app.core.desk import setup_logging
    from app.core.settings import Settings

    from .common import theme
    from .shell.single_instance import hand_over

    setup_logging(echo_warnings=True)
    QCoreApplication.setOrganizationName("research-desk")
    QCoreApplication.setApplicationName("Research Desk")
    QCoreApplication.setApplicationVersion(app_version())
    QApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setWindowIcon(theme.app_icon())
    app.setDesktopFileName("research-desk")  # matches packaging/research-desk.desktop
    if hand_over(files or [], library):  # a window of this user runs already: it takes the files
        log.info("handed %d file(s) to the running window", len(files or []))
        return 0
    settings = Settings.load()
    theme.apply_theme(app, settings.theme)
    log.info("Research Desk %s starting (library %s, %d file(s) to open)", app_version(), library or "from settings",
             len(files or []))
    window = open_window(library, files, settings)
    # SIGTERM (a logout, `kill`, the bundle's smoke test) closes the window as the user would:
    # notes and window state saved, workers stopped. Python sees a signal only when it runs, so
    # a timer lets it run a few times a second while Qt's loop waits.
    signal.signal(signal.SIGTERM, lambda *_: (window.close(), app.quit()))
    wake = QTimer(window, interval=300)
    wake.timeout.connect(lambda: None)
    wake.start()
    try:
        return int(app.exec())
    finally:
        window.shutdown()
        log.info("Research Desk closed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="research-desk-gui", description="Research Desk desktop app")
    parser.add_argument("--library", metavar="DIR", help="library folder (default: settings, then the user data folder)")
    parser.add_argument("files", nargs="*", metavar="PDF", help="PDF files to import into the library and show")
    args = parser.parse_args(argv)
    from pathlib import Path

    return run_app(args.library, files=[str(Path(f).expanduser().absolute()) for f in args.files])


if __name__ == "__main__":
    sys.exit(main())
