"""The key passages' candidates are rated best first, and the later ones only where none of the
first reads as the answer (each rating is a model read)."""

from app.core.research.answer.key_sentences import _Candidate, _ratings


def _candidates(n: int) -> list[_Candidate]:
    return [_Candidate(score=1 - i / 100, number=i, text=f"sentence {i}", first=0, last=0) for i in range(n)]


def _rater(yes: dict[str, float]):
    asked: list[list[str]] = []

    def rate(texts: list[str]) -> list[float]:
        asked.append(list(texts))
        return [yes.get(t, 0.1) for t in texts]

    return rate, asked


def test_a_first_candidate_read_as_the_answer_spares_the_later_reads():
    rate, asked = _rater({"sentence 2": 0.8})
    probs = _ratings(_candidates(20), rate, rated=12, first=8)
    assert [len(a) for a in asked] == [8]
    assert probs is not None and len(probs) == 8 and probs[2] == 0.8


def test_no_answer_among_the_first_rates_the_rest():
    rate, asked = _rater({"sentence 10": 0.9})
    probs = _ratings(_candidates(20), rate, rated=12, first=8)
    assert asked == [[f"sentence {i}" for i in range(8)], [f"sentence {i}" for i in range(8, 12)]]
    assert probs is not None and len(probs) == 12 and probs[10] == 0.9


def test_first_as_large_as_rated_reads_them_all_at_once():
    rate, asked = _rater({})
    assert len(_ratings(_candidates(20), rate, rated=12, first=12) or []) == 12
    assert [len(a) for a in asked] == [12]


def test_a_backend_without_probabilities_rates_nothing():
    assert _ratings(_candidates(5), lambda texts: None, rated=12, first=8) is None
