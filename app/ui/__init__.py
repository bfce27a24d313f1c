"""The desktop app (PySide6). All Qt lives here; the core (app/core) stays Qt-free."""
