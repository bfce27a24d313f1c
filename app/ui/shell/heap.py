"""Keep the garbage collector's full passes off the event loop.

CPython's full (generation 2) collection walks every container object in the process while
holding the GIL, so it stops the UI thread whichever thread set it off. With PySide6, LanceDB
and pyarrow, PyMuPDF, llama.cpp and numpy loaded and a library open, the process holds
300,000–450,000 such objects and one full pass takes 150–250 ms on a 2-core laptop: a visible
hitch in the window while an import or an answer runs on the worker (it failed the event-loop
test in CI at 293 ms).

Almost all of those objects live as long as the window: modules, widgets, the open library.
`gc.freeze()` moves them out of the collector's reach, so later full passes only walk what was
made since. The heap is collected once first, so no garbage is frozen with it.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Collect once, then freeze what survives (the window and the open library).

    Called when a library has loaded: at start-up and after switching libraries, when a
    single pause is expected anyway. After the first call the collection only walks
    objects made since the last freeze, so it is short."""
    gc.collect()
    gc.freeze()


def release() -> None:
    """Hand the frozen objects back to the collector (the window is closing)."""
    gc.unfreeze()
