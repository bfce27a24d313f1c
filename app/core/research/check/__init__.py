"""Support: whether a cited passage states a claim — the rules (numbers, names, direction) and the
model's yes/no judgement, its cut-offs per model. The manuscript check (app/core/check) uses it too."""
