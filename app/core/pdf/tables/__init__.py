"""The tables printed in papers, read as caption and row units."""
