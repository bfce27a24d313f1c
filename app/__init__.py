"""Research Desk: a local-first research assistant over your PDF library."""

__version__ = "0.1.0"
