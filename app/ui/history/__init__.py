"""The history pane."""
