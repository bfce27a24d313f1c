"""Research Desk: a local-first research assistant over your PDF library."""

import os

from .blas_threads import limit_blas_threads
from .malloc_arenas import limit_malloc_arenas
from .pymupdf_layout import skip_layout_model

__version__ = "0.1.0"

limit_blas_threads()
limit_malloc_arenas()
skip_layout_model()
# Lance warns on stderr, once a vector index exists, that its index statistics will
# stop including the IVF centroids; opting in now silences that (we never read them).
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
