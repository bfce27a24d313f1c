"""Parts every pane uses: theme, banners, the worker thread, answer rendering."""
