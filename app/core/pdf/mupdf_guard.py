"""One thread in MuPDF at a time, process-wide.

PyMuPDF drives one MuPDF context for the whole process and does not lock it: two
threads inside MuPDF at once can abort the process (an import's reader thread beside
a page count on another thread did). In the window, an import reads PDFs on its
reader thread while the viewer locates a cited passage on a pool thread; both take
`MUPDF` around each short piece of work (a page read, one page's search), so a
highlight waits for at most one page of the import, never for the whole file.

Work that only ever runs on one thread at a time (the CLI, a rebuild) needs no lock,
but taking it is harmless: it is re-entrant.
"""

from __future__ import annotations

import threading

MUPDF = threading.RLock()
