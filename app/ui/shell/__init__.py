"""The window's frame: main window, menus, dialogs that belong to no pane."""
