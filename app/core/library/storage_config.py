"""How a remote library is reached: its S3 endpoint and credentials, its local cache folder,
and the obstore store built from them (storage.py mirrors files through it).

Credentials come from the usual places, in the AWS SDKs' order: AWS_ACCESS_KEY_ID /
AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN), else the static keys of the AWS_PROFILE (or
default) profile in ~/.aws/credentials and ~/.aws/config; with neither, LanceDB and obstore
use their own chains (instance roles). The endpoint of an S3-compatible server (MinIO, Ceph)
is the --endpoint flag or setting, else AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, else the
profile's endpoint_url. GCS and Azure are configured by the variables their SDKs read
(GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT_NAME / AZURE_STORAGE_ACCOUNT_KEY).
"""

from __future__ import annotations

import configparser
import hashlib
import logging
import os
import re
from pathlib import Path
from typing import Any

import platformdirs

log = logging.getLogger(__name__)


# -- where things are and who may read them --------------------------------------------
def cache_root(uri: str, endpoint: str = "") -> Path:
    """The local cache folder of a remote library. RESEARCH_DESK_CACHE_DIR overrides the base."""
    base = os.environ.get("RESEARCH_DESK_CACHE_DIR") or platformdirs.user_cache_dir("research-desk")
    digest = hashlib.sha256(f"{uri}|{endpoint}".encode()).hexdigest()[:12]
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", uri.partition("://")[2]).strip("-")[:60]
    return Path(base).expanduser() / "libraries" / f"{readable}-{digest}"


def resolve_endpoint(explicit: str = "") -> str:
    """The S3 endpoint: the flag/setting given, else AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL."""
    return (explicit or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or "").strip()


def _aws_profile() -> dict[str, str]:
    """Static keys, region and endpoint of the AWS_PROFILE (or default) profile, if any."""
    name = os.environ.get("AWS_PROFILE") or os.environ.get("AWS_DEFAULT_PROFILE") or "default"
    found: dict[str, str] = {}
    files = (
        (os.environ.get("AWS_CONFIG_FILE") or "~/.aws/config", "default" if name == "default" else f"profile {name}"),
        (os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or "~/.aws/credentials", name),
    )
    for file_name, section in files:  # credentials after config: its keys win
        parser = configparser.RawConfigParser()
        try:
            parser.read(Path(file_name).expanduser(), encoding="utf-8")
        except (OSError, configparser.Error) as exc:
            log.warning("could not read the AWS profile file %s: %s", file_name, exc)
            continue
        if parser.has_section(section):
            found.update({k: v.strip() for k, v in parser.items(section)})
    return found


def s3_options(endpoint: str = "") -> dict[str, str]:
    """LanceDB storage options for S3 (obstore's config is derived from the same values)."""
    env = os.environ
    profile = _aws_profile()
    key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    token = env.get("AWS_SESSION_TOKEN")
    if not (key and secret):
        key, secret = profile.get("aws_access_key_id"), profile.get("aws_secret_access_key")
        token = profile.get("aws_session_token")
    endpoint = resolve_endpoint(endpoint) or profile.get("endpoint_url", "")
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or profile.get("region") or "us-east-1"
    options = {"aws_region": region}
    if key and secret:  # else: the SDK chains (instance roles, SSO) of LanceDB and obstore
        options.update(aws_access_key_id=key, aws_secret_access_key=secret)
        if token:
            options["aws_session_token"] = token
    if endpoint:
        options["aws_endpoint"] = endpoint
        if endpoint.startswith("http://"):
            options["allow_http"] = "true"
    return options


def object_store(uri: str, options: dict[str, str]):
    from datetime import timedelta

    import obstore.store

    # A server that does not answer fails an open in seconds, not after minutes of retries.
    client: dict[str, Any] = {"connect_timeout": timedelta(seconds=5)}
    retry = {"max_retries": 3, "retry_timeout": timedelta(seconds=30)}
    if not uri.startswith(("s3://", "s3a://")):
        # GCS and Azure read their credentials from the environment, as LanceDB does.
        return obstore.store.from_url(uri, client_options=client, retry_config=retry)
    config = {k.removeprefix("aws_"): v for k, v in options.items() if k != "allow_http"}
    if options.get("allow_http") == "true":
        client["allow_http"] = True
    return obstore.store.from_url(uri, config=config, client_options=client, retry_config=retry)


def one_line(exc: BaseException) -> str:
    """The store's error without its multi-line debug dump; S3's error code when it sent one."""
    text = str(exc)
    code = re.search(r"<Code>([^<]+)</Code>", text)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    first = re.sub(r"<\?xml.*", "", first).strip(" :")
    if len(first) > 200:
        first = first[:200] + "…"
    return f"{first} ({code.group(1)})" if code else first
