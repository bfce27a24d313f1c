"""Import: from a PDF to a paper that is listed, searchable and answerable."""
