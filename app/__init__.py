"""Research Desk: a local-first research assistant over your PDF library."""

from .blas_threads import limit_blas_threads

__version__ = "0.1.0"

limit_blas_threads()
