"""Keep NumPy's BLAS to one thread.

NumPy's OpenBLAS starts a worker thread per core and, after each matrix
product, leaves them spinning for a while in case another product follows. Our
products are small (a query against a few thousand vectors, MMR over 30
passages), so a second thread gains nothing; but the spinning thread took a
whole core from LanceDB and llama.cpp. Measured on the 100k-chunk bench
library, 2 cores: one question cost 100 ms of CPU for 54 ms of wall time, 48 ms
of CPU with one BLAS thread (see bench/scale.py).
"""

from __future__ import annotations

import os


def limit_blas_threads() -> None:
    # Read by OpenBLAS when NumPy loads it; if NumPy is already loaded (a host
    # process imported it first), threadpoolctl changes the live setting.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        import numpy  # noqa: F401 - loads OpenBLAS so that the limit below reaches it
        from threadpoolctl import threadpool_limits
    except ImportError:  # the environment variable still applies
        return
    threadpool_limits(limits=1, user_api="blas")
