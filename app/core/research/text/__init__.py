"""What sentences say, for every stage: key terms and stems, citation markers, the paper's own
acronyms, figures in clauses and "respectively" lists. Imports nothing else of research/."""
