"""How llama.cpp's OpenMP workers wait between operations; set before anything loads llama_cpp.

By default they busy-wait for a long time, and whenever another thread competes for the cores (PDF
parsing while indexing, the UI, a second model) the spinning workers starve each other: on a busy
2-core machine chat ran at 2.8 tokens/s spinning vs 20 passive. Fully passive workers, though, sleep
after every one of the hundreds of operations a token takes, and waking them costs more than the
operation (under a hypervisor especially): Qwen2.5-Coder-1.5B wrote 9.4 tokens/s passive against 15.2
with a short spin on an idle 2-core machine. So workers spin briefly (1,000 rounds, tens of
microseconds) and then sleep; with more workers than cores (libgomp's "throttled" case) PASSIVE keeps
them from spinning at all. With one busy loop beside it, passive wrote 10.2 tokens/s and the short spin
7.5: the price of the idle gain.

libgomp reads these once, when it is loaded, i.e. when llama_cpp is first imported. Several modules of
this package import llama_cpp at their top, so the package's __init__ imports this module first of
all: a policy set later is silently ignored (it was, from 2026-11-26 to 2026-12-07, and MiniLM spent
most of its import time spinning). A policy the user set wins.
"""

from __future__ import annotations

import os


def apply() -> None:
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        os.environ.setdefault("GOMP_SPINCOUNT", "1000")


apply()
