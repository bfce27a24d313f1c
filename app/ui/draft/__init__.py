"""The drafting pane."""
