"""The library pane: the paper list, import, a paper's details and labels."""
