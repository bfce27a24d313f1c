"""Reading a PDF as printed: text, layout, OCR, page furniture, metadata and tables."""
