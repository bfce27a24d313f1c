"""The CLI's rendering of typed events: a progress bar with ETA on a terminal, quiet when piped."""

from __future__ import annotations

import io

from app.core.events import Notice, Progress, Stage, Step, Token
from app.terminal import TerminalRenderer, format_duration
from tests.support.clock import FakeClock


def renderer(interactive: bool) -> tuple[TerminalRenderer, io.StringIO, FakeClock]:
    out, clock = io.StringIO(), FakeClock()
    return TerminalRenderer(out, interactive=interactive, clock=clock), out, clock


def test_terminal_shows_stage_bar_and_time_left():
    r, out, clock = renderer(interactive=True)
    r(Stage("import", 1, 1))
    clock.now += 1
    r(Progress(0, 100, "pages", "page 1/10", Step(1, 4, "smith2020.pdf", 1, 10)))
    clock.now += 10  # 25 pages in 10 s: 75 pages left take 30 s
    r(Progress(25, 100, "pages", "page 5/10", Step(1, 4, "smith2020.pdf", 5, 10)))
    r(Progress(100, 100, "pages", "done"))  # the last step always draws
    lines = [line for line in out.getvalue().split("\r\x1b[K") if line]
    assert any("25/100 pages" in line and "ETA 30s" in line and "smith2020.pdf" in line for line in lines), lines
    assert lines[0] == "import"
    assert lines[-1].startswith("█" * 24 + " 100/100 pages")


def test_piped_output_stays_quiet_but_keeps_notices():
    r, out, _ = renderer(interactive=False)
    r(Stage("scope", 1, 4, "searching summaries"))
    r(Progress(3, 10, "pages"))
    assert out.getvalue() == ""
    r(Notice("2 papers need OCR", "install the OCR extra"))
    assert out.getvalue() == "warning: 2 papers need OCR (install the OCR extra)\n"


def test_tokens_go_to_the_callers_stream_only_when_asked():
    r, out, _ = renderer(interactive=True)
    r(Token("ignored"))
    got: list[str] = []
    r.on_token = got.append
    r(Token("Kestrels leave in September."))
    assert got == ["Kestrels leave in September."] and "Kestrels" not in out.getvalue()


def test_durations_read_like_a_person_would_write_them():
    assert [format_duration(s) for s in (5, 75, 3725)] == ["5s", "1m15s", "1h02m"]


def test_import_reading_and_vectors_share_the_line_until_the_reading_ends():
    from app.core.events import VECTORS_UNIT

    r, out, clock = renderer(interactive=True)
    r(Progress(10, 100, "pages", "read 0 of 4 papers · page 10/25", Step(1, 4, "a.pdf", 10, 25)))
    clock.now += 1
    r(Progress(16, 40, VECTORS_UNIT, "vectors: 16 of 40 passages", Step(1, 1, "a.pdf")))
    clock.now += 1
    r(Progress(100, 100, "pages", "read 4 of 4 papers", Step(4, 4, "d.pdf")))
    clock.now += 1
    r(Progress(48, 130, VECTORS_UNIT, "vectors: 48 of 130 passages", Step(2, 4, "b.pdf")))
    lines = [line for line in out.getvalue().split("\r\x1b[K") if line]
    assert "10/100 pages" in lines[1] and lines[1].endswith("|  vectors: 16 of 40 passages")
    # The reading's last line stays on screen; the passages' bar follows alone on the next.
    assert "100/100 pages" in lines[2] and lines[2].endswith("|  vectors: 16 of 40 passages\n")
    assert "48/130 passages" in lines[3] and "pages" not in lines[3]
