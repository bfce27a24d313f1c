"""Libraries the tests build through the core: settings on the real tiny models, papers written as
PDFs, a Desk on a library that holds them; and what two writers of one library must see."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from app.core.settings import ModelConfig, Settings
from tests.support.pdf_factory import make_paper

if TYPE_CHECKING:
    from app.core.desk import Desk
    from app.core.library.store import Library


def tiny_settings(tiny_models: dict[str, Path], **changes) -> Settings:
    """Settings on the real tiny models (the `tiny_models` fixture): SmolLM2's chat with a 2048-token
    context, MiniLM's embedding with 512; `changes` set settings fields (e.g. deep=DeepParams(…))."""
    settings = Settings(
        chat=ModelConfig(path=str(tiny_models["chat"]), context_length=2048),
        embedding=ModelConfig(path=str(tiny_models["embedding"]), context_length=512),
    )
    for key, value in changes.items():
        setattr(settings, key, value)
    return settings


def write_papers(folder: Path, papers: dict[str, tuple]) -> Path:
    """Each paper as a PDF in `folder`: {file name: (title, authors, pages)}, or with a fourth item,
    make_paper's other keyword arguments (e.g. {"metadata": {...}})."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, (title, authors, pages, *more) in papers.items():
        make_paper(folder / name, title, authors, pages, **(more[0] if more else {}))
    return folder


def import_once(library: Path, papers: Path, settings: Settings):
    """Import the PDFs under `papers` into `library` through the core and close the Desk (a seed a
    test copies); the add's report."""
    from app.core.desk import Desk

    desk = Desk(settings, str(library))
    try:
        return desk.add([papers])
    finally:
        desk.close()


def import_words_only(desk: "Desk", paths: list, task=None):
    """Import `paths` through the core's importer with its vectors left for later: every paper is
    "words" (listed, searchable by its words, zero vectors); the import's report."""
    from app.core.ingest.pipeline import Importer

    return Importer(desk.library, desk.embedder(), embedding_identity=desk.embedding_identity(),
                    batch_size=desk.settings.ingest.batch_size, task=task, vectors=False).run(paths)


@contextmanager
def desk_on(root: Path, papers: dict[str, tuple], settings: Settings) -> Iterator["Desk"]:
    """A Desk on a library at root/lib that holds `papers` (written to root/in, see write_papers),
    closed after."""
    from app.core.desk import Desk

    write_papers(root / "in", papers)
    desk = Desk(settings, library=str(root / "lib"))
    try:
        assert desk.add([root / "in"]).ok
        yield desk
    finally:
        desk.close()


# -- creating a table: one writer at a time (app/core/library/table_creation.py) --------------------
def one_chunk(paper_id: str):
    """One chunk of `paper_id` with an 8-dimensional vector, as Library.append_chunks takes them."""
    import numpy as np

    from app.core.records import Chunk

    return [Chunk(paper_id=paper_id, chunk_index=0, text=f"{paper_id} text", page=1)], np.ones((1, 8), "float32")


def assert_creation_waits_for_the_lock_holder(first: "Library", second: "Library") -> None:
    """`second` needs the chunks table while `first` holds the creation lock and creates it:
    `second` waits, then opens the table `first` made and adds to it; no row is lost.

    Without the lock `second` would create the table itself, and the create of `first`
    (or, in a real race, Lance's Overwrite) would collide with it."""
    import threading

    from app.core.library import table_creation
    from app.core.library.schema import CONTENT_CHUNKS, chunks_schema

    done: list[BaseException | None] = []

    def append() -> None:
        try:
            second.append_chunks(CONTENT_CHUNKS, *one_chunk("second"))
            done.append(None)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            done.append(exc)

    with table_creation.creating(first.root, first.mirror, CONTENT_CHUNKS):
        waiter = threading.Thread(target=append)
        waiter.start()
        waiter.join(timeout=1.0)
        assert waiter.is_alive() and not done, "the second writer did not wait for the lock"
        table = first.db.create_table(CONTENT_CHUNKS, schema=chunks_schema(8, content=True))
        first._tables[CONTENT_CHUNKS] = table
        first.append_chunks(CONTENT_CHUNKS, *one_chunk("first"))
    waiter.join(timeout=30)
    assert done == [None], done
    assert first.chunk_counts(CONTENT_CHUNKS) == {"first": 1, "second": 1}
    assert second.chunk_counts(CONTENT_CHUNKS) == {"first": 1, "second": 1}
