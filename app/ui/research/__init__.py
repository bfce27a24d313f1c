"""The research pane: the question, the answer, deep rounds, scope."""
