"""Stage 2 and focusing: the passages retrieved and ranked, counted in tokens, cleaned of back and
front matter, reference lists and figure text, and cut to the sentences the model reads."""
