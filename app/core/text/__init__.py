"""Plain-text helpers every layer reads with: sentences, acronyms, line breaks, wording."""
