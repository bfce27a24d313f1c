"""The log file, and what a user may send when something fails: no secrets in it.

`setup_logging()` runs once at start (the CLI and the window alike): records of the
app's loggers at INFO and above, and every library's warnings, go to a rotating file
in the platform's log folder (`paths.log_dir()`; RESEARCH_DESK_LOG_DIR overrides).
`last_errors()` reads the newest warnings and errors back, tracebacks included, for
"Copy diagnostics". `mask_secrets()` / `mask_text()` hide keys, tokens, passwords and
the credentials of URIs before anything is shown or copied.
"""

from __future__ import annotations

import logging
import logging.handlers
import re
import sys
from pathlib import Path
from typing import Any

from .. import paths

LOG_NAME = "research-desk.log"
MAX_BYTES = 1_000_000
BACKUPS = 3  # research-desk.log.1 … .3: at most 4 MB on disk
FORMAT = "%(asctime)s %(levelname)s [%(threadName)s] %(name)s: %(message)s"
MASK = "••••"

# Words of field names whose values are secrets: api_key, apiKey, token, secret_access_key, password, …
_SECRET_WORDS = {"key", "apikey", "token", "secret", "password", "passwd", "pass", "credential", "credentials",
                 "auth", "signature", "cookie", "sas"}
_HARMLESS = {"", "not-needed", "none", "null"}  # placeholders that say "no secret here"
_PATTERNS: dict[str, str] = {
    "record_start": r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (?P<level>[A-Z]+) ",
    "uri_credentials": r"(?i)(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<cred>[^/@\s]+)@",
    "secret_assignment": r"(?i)(?P<name>[\w.-]*(?:key|token|secret|passw|credential|signature)[\w.-]*)(?P<sep>\s*[=:]\s*|=)(?P<value>[^\s&,;'\"]{8,})",
    "bearer": r"(?i)(?P<scheme>Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}",
    "api_key_like": r"\b(sk|pk|rk|hf|ghp|gho|xox[abp])[-_][A-Za-z0-9_-]{12,}\b",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}

_handler: logging.Handler | None = None


class _CurrentStderr(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (as logging's last resort does)."""

    def __init__(self) -> None:
        super().__init__()

    @property  # type: ignore[override]
    def stream(self):  # noqa: D401 - a property standing in for the attribute
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def log_file() -> Path:
    return paths.log_dir() / LOG_NAME


def setup_logging(*, echo_warnings: bool = False) -> Path | None:
    """Send log records to the rotating log file; returns its path (None if it cannot be written).

    Idempotent: a second call keeps the handler, unless the log folder changed (tests point
    RESEARCH_DESK_LOG_DIR at a fresh folder), when the file follows it. `echo_warnings`
    (the CLI): warnings and errors also print on stderr, as they did before any handler, except
    records marked `extra={"shown": True}` (the front end printed them itself).
    """
    global _handler
    target = log_file()
    root = logging.getLogger()
    if _handler is not None:
        if Path(getattr(_handler, "baseFilename", "")) == target.resolve():
            _set_echo(root, echo_warnings)
            return target
        root.removeHandler(_handler)
        _handler.close()
        _handler = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(target, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    except OSError as exc:
        # A read-only home or a full disk must not stop the app: it runs without a log file.
        print(f"research-desk: cannot write the log file {target} ({exc.strerror or exc})", file=sys.stderr)
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(logging.INFO)
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.INFO:
        root.setLevel(logging.INFO)
    # Libraries' INFO chatter (every HTTP request) stays out; their warnings come in.
    for noisy in ("httpx", "httpcore", "urllib3", "botocore", "lancedb", "PIL", "onnxruntime"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.captureWarnings(True)
    _handler = handler
    _set_echo(root, echo_warnings)
    return target


def _set_echo(root: logging.Logger, echo: bool) -> None:
    existing = [h for h in root.handlers if isinstance(h, _CurrentStderr)]
    if echo and not existing:
        echo_handler = _CurrentStderr()
        echo_handler.setLevel(logging.WARNING)
        echo_handler.setFormatter(logging.Formatter("%(message)s"))
        echo_handler.addFilter(lambda record: not getattr(record, "shown", False))
        root.addHandler(echo_handler)
    elif not echo:
        for h in existing:
            root.removeHandler(h)


def last_errors(limit: int = 20, *, path: Path | None = None, max_chars: int = 200_000) -> list[str]:
    """The newest `limit` warning/error records of the log (oldest first), tracebacks kept, secrets masked."""
    path = path or log_file()
    text = ""
    for candidate in (path, path.with_name(path.name + ".1")):
        try:
            with open(candidate, "rb") as fh:
                fh.seek(0, 2)
                size = fh.tell()
                fh.seek(max(0, size - max_chars))
                text = fh.read().decode("utf-8", "replace") + ("\n" + text if text else "")
        except OSError:
            continue
        if len(text) >= max_chars:
            break
    records: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        start = P["record_start"].match(line)
        if start:
            records.append((start["level"], [line]))
        elif records:
            records[-1][1].append(line)
    wanted = [lines for level, lines in records if level in ("WARNING", "ERROR", "CRITICAL")]
    return [mask_text("\n".join(lines))[:4000] for lines in wanted[-limit:]]


def mask_text(text: str) -> str:
    """`text` with URI credentials, key=value secrets, bearer tokens and API-key-like words hidden."""
    text = P["uri_credentials"].sub(lambda m: f"{m['scheme']}{MASK}@", text)
    text = P["secret_assignment"].sub(
        lambda m: m.group(0) if m["value"].lower() in _HARMLESS else f"{m['name']}{m['sep']}{MASK}", text)
    text = P["bearer"].sub(lambda m: f"{m['scheme']} {MASK}", text)
    return P["api_key_like"].sub(MASK, text)


def secret_name(name: str) -> bool:
    """Whether a field or variable called `name` holds a secret (api_key, AWS_SECRET_ACCESS_KEY, apiKey)."""
    words = re.split(r"[^a-z0-9]+", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower())
    return any(w in _SECRET_WORDS for w in words)


def mask_secrets(data: Any, name: str = "") -> Any:
    """A copy of `data` (dicts, lists, strings) fit to share: secret-named fields masked, URIs cleaned."""
    if isinstance(data, dict):
        return {k: mask_secrets(v, str(k)) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [mask_secrets(v, name) for v in data]
    if isinstance(data, str):
        if name and secret_name(name) and data.strip().lower() not in _HARMLESS:
            return MASK
        return mask_text(data)
    return data
