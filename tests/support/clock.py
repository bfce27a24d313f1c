"""The tests' one fake clock."""

from __future__ import annotations


class FakeClock:
    """A monotonic clock that moves only when told: call it for the time (seconds); a test moves
    it by `advance(s)` or by setting `now`. It starts at 1000 s, as a real monotonic clock is
    never at zero."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
