"""Sharing an answer with its evidence: a self-contained web page, a bundle anyone can verify offline, annotated PDFs."""
