"""The tests' stand-ins for a chat model: one scripted model, and one whose calls cost time on a
fake clock. Each test configures one of these two; none writes a chat model of its own to
answer from a script (a test may subclass one to add a probability judge or a delay).
"""

from __future__ import annotations

import json
import random
import re
import time

from app.core.errors import Cancelled
from app.core.models.base import ChatModel

# The support check's reply that reads no verdict: what a scripted model says once its replies are spent.
NO_VERDICTS = '{"verdicts": []}'
# A deep-research loop decision that finds no gaps (a scripted decision is laid over it).
NO_GAPS = {"iteration": 0, "summary": "s", "gaps": [], "shouldContinue": True, "nextSearchTopic": "",
           "timeRemainingMinutes": 1.0}
# A drafting decision that finds the evidence sufficient (a scripted decision is laid over it).
SUFFICIENT = {"sufficient": True, "nextQuery": "", "missing": []}

_SOURCE = re.compile(r"Passage (\d+)[^\n]*? cite it as \[(\S+), page (\d+)\]\n([^\n]+)")  # citation style "tags"
_NUMBERED = re.compile(r"^\[(\d+)\] \((\S+), page (\d+)[^\n]*\)\n([^\n]+)", re.M)  # citation style "numbers"


def verdict_items(schema: dict, script) -> list:
    """The support check's verdicts in the shape its schema asks for, cycling through `script`."""
    n = schema.get("minItems") or schema.get("maxItems") or 1
    verdicts = [script[i % len(script)] for i in range(n)]
    if schema["items"].get("type") == "string":
        return verdicts
    return [{"pair": i, "verdict": v} for i, v in enumerate(verdicts, 1)]


def role_of(json_schema: dict | None) -> str:
    """What a call asks for, read from the JSON schema it holds the reply to."""
    if json_schema is None:
        return "text"
    props = json_schema.get("properties", {})
    for key, role in (("gaps", "decide"), ("covered", "decide"), ("items", "score"), ("claims", "claims"),
                      ("verdicts", "check"), ("paragraphs", "write"), ("claim", "rewrite")):
        if key in props:
            return role
    return "other"


class ScriptedChat(ChatModel):
    """Replies from scripts, never from weights. Two ways to script it:

    * `replies`: the calls' replies in order (a string, or a function of the messages that returns
      one), streamed seven characters at a time (`cancel_after`: Cancelled once that many characters
      of a reply are out) and held to the schema's JSON; once spent, every call gets `spent`.
    * Without `replies`, by what the call asks for (`role_of` its schema):
        - "decide": the next of `decisions` (a dict laid over NO_GAPS for deep research's loop, over
          {"covered": []} and SUFFICIENT for drafting's; a string as it stands), then
          `after_decisions` (None: no gaps; sufficient);
        - "score": every passage of the prompt scored 0.8, with `summary`;
        - "claims": one claim per numbered passage (at most `sources`), repeating its start, so the
          rules agree with it; streamed. `claims=False`: the model does not keep to the shape and
          gives passage scores (the engine retries, then asks for free text);
        - "check": `verdicts` in turn, from the first, for each call;
        - "write": `writer(keys, on_token)`, with the keys the draft's schema offers;
        - any other schema: passage scores;
        - no schema: `answer`, or one cited bullet per passage of the prompt (at most `sources`),
          streamed word by word (`stream="whole"`: in one piece; "silent": not streamed).
      `delay` slows each streamed piece, and a structured reply five times as much. With
      `hears_cancel` the model stops (Cancelled) between streamed pieces and before a decision or
      a score, as llama.cpp does; without it a cancel is the caller's to notice.

    `calls` keeps each call (messages, schema, temperature, role); `roles` lists the roles in order.
    """

    def __init__(self, replies: list | None = None, *, spent: str = NO_VERDICTS, cancel_after: int | None = None,
                 decisions: list | None = None, after_decisions: dict | None = None, verdicts=("supported",),
                 writer=None, answer: str | None = None, claims: bool = True, summary: str = "relevant",
                 sources: int = 3, delay: float = 0.0, stream: str = "words", hears_cancel: bool = True,
                 context_length: int = 4096, name: str = "scripted") -> None:
        self.replies = None if replies is None else list(replies)
        self.spent, self.cancel_after = spent, cancel_after
        self.decisions, self.after_decisions = list(decisions or []), after_decisions
        self.verdicts = list(verdicts)
        self.writer, self.answer, self.claims, self.summary, self.sources = writer, answer, claims, summary, sources
        self.delay, self.stream, self.hears_cancel = delay, stream, hears_cancel
        self.context_length, self.name = context_length, name
        self.calls: list[dict] = []

    @property
    def roles(self) -> list[str]:
        return [c["role"] for c in self.calls]

    def chat(self, messages, *, max_tokens=512, temperature=0.2, on_token=None, cancelled=None, json_schema=None,
             timeout_s=None, figures=None):
        role = role_of(json_schema)
        self.calls.append({"messages": [dict(m) for m in messages], "schema": json_schema, "temperature": temperature,
                           "role": role})
        if self.replies is not None:
            return self._scripted(messages, max_tokens, on_token, json_schema)
        prompt = messages[-1]["content"]
        if role == "claims" and self.claims:
            return self._stream(self._claims(prompt), on_token, cancelled)
        if role == "check":
            return json.dumps({"verdicts": verdict_items(json_schema["properties"]["verdicts"], self.verdicts)})
        if role == "write" and self.writer is not None:
            keys = json_schema["properties"]["paragraphs"]["items"]["properties"]["cites"]["items"]["enum"]
            return self.writer(keys, on_token)
        if role == "text":
            return self._stream(self.answer if self.answer is not None else self._cited(prompt), on_token, cancelled)
        if self.delay:
            time.sleep(self.delay * 5)
        if self.hears_cancel and cancelled is not None and cancelled():
            raise Cancelled()
        if role == "decide":
            return self._decision(json_schema)
        n = prompt.count("[Source ")
        return json.dumps({"items": [{"source": i, "summary": self.summary, "score": 0.8} for i in range(1, n + 1)]})

    def _scripted(self, messages, max_tokens, on_token, json_schema) -> str:
        reply = self.replies.pop(0) if self.replies else self.spent
        if callable(reply):  # a reply that reads the prompt (e.g. to cite the right passage number)
            reply = reply(messages)
        for i in range(0, len(reply), 7):
            if self.cancel_after is not None and i >= self.cancel_after:
                raise Cancelled()
            if on_token:
                on_token(reply[i : i + 7])
        if json_schema is not None:
            from app.core.models.factory import require_json

            require_json(reply, False, max_tokens)
        return reply

    def _decision(self, json_schema: dict) -> str:
        d = self.decisions.pop(0) if self.decisions else self.after_decisions
        if isinstance(d, str):
            return d
        if "covered" in json_schema["properties"]:
            return json.dumps({"covered": [], **(SUFFICIENT if d is None else d)})
        return json.dumps({**NO_GAPS, **(d or {})})

    def _claims(self, prompt: str) -> str:
        claims = []
        for n, _paper_id, _page, text in _NUMBERED.findall(prompt)[: self.sources]:
            words = re.sub(r"[#*`]", "", text).split()[:14]
            claims.append({"text": " ".join(words).rstrip(".,;:") + ".", "sources": [int(n)]})
        if not claims:
            claims.append({"text": "The passages do not answer the question.", "sources": []})
        return json.dumps({"claims": claims})

    def _cited(self, prompt: str) -> str:
        numbered = _NUMBERED.findall(prompt)[: self.sources]
        found = numbered or _SOURCE.findall(prompt)[: self.sources]
        lines = ["The library answers this directly.", ""]
        for n, paper_id, page, text in found:
            words = re.sub(r"[#*`]", "", text).split()[:14]
            tag = f"[{n}]" if numbered else f"[{paper_id}, page {page}]"
            lines.append(f"- {' '.join(words).rstrip('.,;:')} {tag}")
        if not found:
            lines.append("The evidence does not answer the question.")
        return "\n".join(lines) + "\n"

    def _stream(self, text: str, on_token, cancelled) -> str:
        out: list[str] = []
        if self.stream == "silent":
            return text
        for piece in [text] if self.stream == "whole" else re.findall(r"\S+\s*|\s+", text):
            if self.hears_cancel and cancelled is not None and cancelled():
                raise Cancelled()
            if self.delay:
                time.sleep(self.delay)
            out.append(piece)
            if on_token is not None:
                on_token(piece)
        return "".join(out)


class TimedChat(ChatModel):
    """A scripted model on a fake clock whose calls cost what a real one's do: reading the prompt
    at `read` tokens/s, then writing at `write` tokens/s, streamed four characters a token and
    stopped by `cancelled` between tokens (as llama.cpp is). It writes loop decisions (deep
    research's and drafting's, from `decisions`), relevance scores (with `summary`), claims citing
    the passages it was offered (`claims_slowdown`: that many times slower), a faulted claim again,
    verdicts from a script (going on where the last call left it), and a draft's paragraphs
    (filling ~80 % of the token limit, as a real model asked for N words does). `kinds` lists what
    each call asked for (`role_of`)."""

    context_length = 4096
    # Claims of a realistic length (~35 tokens with their JSON), lower case: no name for the rules to miss.
    CLAIMS = ["kestrels leave the alpine valleys in autumn, most of them in the second half of september after breeding",
              "the median departure from the valleys falls in mid september, with little change between the years studied",
              "young birds depart from the valleys several days later than the adults, which leave first after breeding",
              "the loggers carried by the birds record their positions every half hour during the autumn departure",
              "departure timing is known from years of ringing data collected in the valleys by the same field teams",
              "adults breeding at high altitude leave the valleys earlier than those breeding near the valley floor"]
    VOCABULARY = ("kestrels valleys autumn departure birds breeding meadows voles altitude weather nights adults "
                  "young loggers positions season rings field teams slopes").split()

    def __init__(self, clock, *, read=100.0, write=10.0, decisions=(), verdicts=("supported",), claims_slowdown=1.0,
                 summary="relevant", name=""):
        self.clock, self.read, self.write = clock, read, write
        self.decisions, self.verdicts = list(decisions), list(verdicts)
        self.claims_slowdown, self.summary, self.name = claims_slowdown, summary, name
        self.kinds: list[str] = []

    def _prose(self, seed: int, chars: int) -> str:
        rng, words, sentence = random.Random(seed), [], []
        while len(" ".join(words)) < chars:
            sentence.append(rng.choice(self.VOCABULARY))
            if len(sentence) == 10:
                words += [sentence[0].capitalize(), *sentence[1:-1], sentence[-1] + "."]
                sentence = []
        return " ".join(words)

    def chat(self, messages, *, max_tokens=512, temperature=0.2, on_token=None, cancelled=None, json_schema=None,
             timeout_s=None, figures=None):
        props = (json_schema or {}).get("properties", {})
        prompt = "\n".join(m["content"] for m in messages)
        kind, slow = role_of(json_schema), 1.0
        if kind == "text":
            reply = " ".join(str(i) for i in range(1, 41))
        elif kind == "decide" and "covered" in props:
            d = self.decisions.pop(0) if self.decisions else SUFFICIENT
            reply = json.dumps({"covered": [], **d})
        elif kind == "decide":
            d = self.decisions.pop(0) if self.decisions else {"gaps": []}
            reply = json.dumps({**NO_GAPS, **d})
        elif kind == "score":
            n = prompt.count("[Source ")
            reply = json.dumps({"items": [{"source": i, "summary": self.summary, "score": 0.8} for i in range(1, n + 1)]})
        elif kind == "claims":
            slow = self.claims_slowdown
            claims = props["claims"]
            numbers = claims["items"]["properties"]["sources"]["items"].get("enum") or [1]
            done = sum(k == "claims" for k in self.kinds)  # the second turn adds the supporting claims
            texts = self.CLAIMS[1:] if done else self.CLAIMS
            reply = json.dumps({"claims": [{"text": t, "sources": [numbers[i % len(numbers)]]}
                                           for i, t in enumerate(texts[: claims["maxItems"]])]})
        elif kind == "rewrite":  # a claim the check faulted, written again (research/answer/rewrite.py)
            reply = json.dumps({"claim": self.CLAIMS[0]})
        elif kind == "check":
            reply = json.dumps({"verdicts": verdict_items(props["verdicts"], self.verdicts)})
            n = props["verdicts"]["minItems"] % len(self.verdicts)  # the script goes on where this call left it
            self.verdicts = self.verdicts[n:] + self.verdicts[:n]
        elif kind == "write":
            keys = props["paragraphs"]["items"]["properties"]["cites"]["items"]["enum"]
            n = props["paragraphs"]["maxItems"]
            chars = int(0.8 * max_tokens * 4 / n) - 40
            reply = json.dumps({"paragraphs": [{"cites": [keys[i % len(keys)]], "text": self._prose(i, chars)}
                                               for i in range(n)]})
        else:
            raise AssertionError(f"unexpected schema {props}")
        self.kinds.append(kind)
        self.clock.advance(self.count_tokens(prompt) / self.read)  # reading: never interrupted
        pieces = [reply[i : i + 4] for i in range(0, len(reply), 4)][:max_tokens]
        for piece in pieces:
            self.clock.advance(slow / self.write)
            if cancelled is not None and cancelled():
                raise Cancelled()
            if on_token is not None:
                on_token(piece)
        return "".join(pieces)
