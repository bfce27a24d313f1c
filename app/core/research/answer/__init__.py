"""Stage 3: the model's answer written from the focused evidence — claims with their citations,
the key passages quoted beside them, the parts of the question, and the answer's own check."""
