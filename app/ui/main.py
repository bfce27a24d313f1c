"""Entry point of the desktop app: `research-desk` (no subcommand) or `research-desk-gui`."""

from __future__ import annotations

import argparse
import sys


def run_app(library: str | None = None, argv: list[str] | None = None) -> int:
    """Open the main window on `library` (or the configured one); returns the exit code."""
    from PySide6.QtCore import QCoreApplication, Qt
    from PySide6.QtWidgets import QApplication

    from app.core.settings import Settings

    from . import theme
    from .main_window import MainWindow

    QCoreApplication.setOrganizationName("research-desk")
    QCoreApplication.setApplicationName("Research Desk")
    QApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setWindowIcon(theme.app_icon())
    app.setDesktopFileName("research-desk")  # matches packaging/research-desk.desktop
    settings = Settings.load()
    theme.apply_theme(app, settings.theme)
    window = MainWindow(settings, library)
    window.show()
    try:
        return int(app.exec())
    finally:
        window.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="research-desk-gui", description="Research Desk desktop app")
    parser.add_argument("--library", metavar="DIR", help="library folder (default: settings, then the user data folder)")
    args = parser.parse_args(argv)
    return run_app(args.library)


if __name__ == "__main__":
    sys.exit(main())
