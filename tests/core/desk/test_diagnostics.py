"""The log file and diagnostics without secrets (app/core/desk/diagnostics.py)."""

from __future__ import annotations

import logging

from app.core import paths
from app.core.desk import last_errors, log_file, mask_secrets, mask_text, setup_logging


def test_log_file_is_set_up_once_in_the_log_folder_and_reads_back_errors(tmp_path):
    path = setup_logging()
    assert path == log_file() == paths.log_dir() / "research-desk.log"
    assert str(path).startswith(str(tmp_path))  # RESEARCH_DESK_LOG_DIR (conftest) points here
    setup_logging()
    handlers = [h for h in logging.getLogger().handlers if getattr(h, "baseFilename", "") == str(path)]
    assert len(handlers) == 1
    log = logging.getLogger("app.test")
    log.info("an ordinary line")
    try:
        raise ValueError("the cause")
    except ValueError:
        log.exception("it failed with api_key=sk-abcdefghijklmnopqrstu")
    for h in handlers:
        h.flush()
    errors = last_errors()
    assert len(errors) == 1
    assert "it failed" in errors[0] and "ValueError: the cause" in errors[0] and "Traceback" in errors[0]
    assert "sk-abcdefghijklmnop" not in errors[0]


def test_masking_hides_keys_tokens_and_uri_credentials():
    masked = mask_secrets({
        "chat": {"api_key": "sk-live-123456789012345", "base_url": "https://alice:hunter2@llm.lab/v1", "model": "qwen"},
        "embedding": {"api_key": "not-needed"},
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI", "AWS_SESSION_TOKEN": "FQoGZXIvYXdz", "library": "s3://bucket/papers",
        "research": {"first_claim_tokens": 300, "keywords": ["a"]},
    })
    text = repr(masked)
    for secret in ("sk-live", "hunter2", "alice", "wJalr", "FQoG"):
        assert secret not in text
    assert masked["embedding"]["api_key"] == "not-needed"
    assert masked["chat"]["model"] == "qwen" and masked["library"] == "s3://bucket/papers"
    assert masked["research"]["first_claim_tokens"] == 300
    assert "hunter2" not in mask_text("GET https://bob:hunter2@minio:9000/x?X-Amz-Signature=abcdef123456789 Bearer eyJhbGciOiJIUz")
    assert "abcdef123456789" not in mask_text("url?X-Amz-Signature=abcdef123456789&x=1")
