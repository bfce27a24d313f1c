"""Deep research: rounds of search within a time budget, planned from the model's measured speed,
reported as they go, ending in a standard answer over everything found."""
