"""The research pane's Papers tab (app/ui/research/pane.py)."""

from __future__ import annotations

from app.core.records import Evidence
from tests.support.papers import paper


def test_the_papers_tab_puts_the_papers_with_evidence_first_and_mutes_the_ones_only_searched(qtbot, qapp):
    """Stage 1's shortlist is shown before any passage is read; once the evidence is in, a paper it
    only searched must not lead the list."""
    from app.ui.common import theme
    from app.ui.research.pane import PAPER_ID_ROLE, ResearchPane

    theme.apply_theme(qapp, "light")
    pane = ResearchPane()
    qtbot.addWidget(pane)
    papers = [paper(pid, title, page_count=3)
              for pid, title in [("stereo", "Real-time Temporal Stereo Matching"),
                                 ("teams", "Operative Team Familiarity"), ("neo", "Near-Earth Objects")]]
    pane.show_shortlist(papers)
    assert pane.tabs.tabText(0) == "Papers (3)"
    evidence = [Evidence(n, "teams", n, str(n), "", "Median SS and SC scores were 0.08 and 0.06.", 0.8) for n in (1, 2)]
    pane.show_evidence(evidence)
    rows = [pane.papers.topLevelItem(i) for i in range(pane.papers.topLevelItemCount())]
    assert [r.data(0, PAPER_ID_ROLE) for r in rows] == ["teams", "stereo", "neo"]  # the searched ones keep their order
    assert pane.tabs.tabText(0) == "Papers (1 of 3)"
    muted = theme.colors()["muted"].lower()
    assert rows[0].foreground(0).color().name() != muted
    assert all(r.foreground(0).color().name() == muted for r in rows[1:])
    assert "none of its passages" in rows[1].toolTip(0)
    pane.show_evidence(evidence)  # a second report (deep rounds) changes nothing
    assert [pane.papers.topLevelItem(i).toolTip(0).count("Searched:") for i in range(3)] == [0, 1, 1]
    # A later round finds evidence in a paper the first only searched: it is no longer muted.
    pane.show_evidence([*evidence, Evidence(3, "neo", 2, "2", "", "Survey completeness is 90 %.", 0.7)])
    rows = [pane.papers.topLevelItem(i) for i in range(pane.papers.topLevelItemCount())]
    assert [r.data(0, PAPER_ID_ROLE) for r in rows] == ["teams", "neo", "stereo"]
    assert [r.foreground(0).color().name() == muted for r in rows] == [False, False, True]
    assert [r.toolTip(1).count("Searched:") for r in rows] == [0, 0, 1]
    assert rows[1].toolTip(0).startswith("Near-Earth Objects\nA. Author")
