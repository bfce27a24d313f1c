"""The PDF reader: pages, highlights, find, full-text search."""
