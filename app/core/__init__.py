"""The Qt-free core: library, import, models and research. Usable headless."""
