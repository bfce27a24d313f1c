"""No connection leaves the machine during a whole llama.cpp session (issue 18, "network").

Every Python-level way out is guarded for the length of the test: `socket.socket.connect`
/ `connect_ex`, `socket.create_connection` and name lookups (`socket.getaddrinfo`). A
connection to anything but the configured model hosts is recorded and refused, so a
library that phones home fails the test instead of hanging on a network that is not there.
llama.cpp runs in-process and opens no socket of its own; as a second check, after the
session the process's own TCP sockets (from /proc, where there is one) must all be local.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def _is_local(host: str) -> bool:
    if host in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _model_hosts(settings) -> set[str]:
    """The hosts the settings name for models (LM Studio, an OpenAI-compatible server)."""
    hosts = set()
    for cfg in (settings.chat, settings.embedding):
        hosts.add(cfg.host.rsplit(":", 1)[0])
        hosts.add(urlsplit(cfg.base_url).hostname or "")
    return {h for h in hosts if h}


@pytest.fixture
def guarded_network(monkeypatch):
    """Refuse and record every connection or lookup that would leave the machine."""
    attempts: list[str] = []
    allowed: set[str] = set()
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def permitted(address) -> bool:
        if not isinstance(address, tuple):  # AF_UNIX paths stay on the machine
            return True
        host = str(address[0])
        return _is_local(host) or host in allowed

    def connect(self, address):
        if not permitted(address):
            attempts.append(f"connect {address!r}")
            raise OSError(f"network use refused by the test: {address!r}")
        return real_connect(self, address)

    def connect_ex(self, address):
        if not permitted(address):
            attempts.append(f"connect_ex {address!r}")
            return 111  # ECONNREFUSED
        return real_connect_ex(self, address)

    def create_connection(address, *args, **kwargs):
        if not permitted(address):
            attempts.append(f"create_connection {address!r}")
            raise OSError(f"network use refused by the test: {address!r}")
        host, port = address[:2]
        sock = socket.socket(socket.AF_INET6 if ":" in str(host) else socket.AF_INET, socket.SOCK_STREAM)
        sock.connect((host, port))
        return sock

    def getaddrinfo(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else str(host or "")
        if name and not _is_local(name) and name not in allowed:
            attempts.append(f"getaddrinfo {name!r}")
            raise socket.gaierror(socket.EAI_NONAME, f"name lookup refused by the test: {name}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return attempts, allowed


def _remote_tcp_peers() -> list[str]:
    """Remote ends of this process's TCP sockets that are not loopback (Linux /proc)."""
    fd_dir = Path("/proc/self/fd")
    if not fd_dir.is_dir():
        return []
    inodes = set()
    for fd in fd_dir.iterdir():
        try:
            target = fd.readlink().as_posix()
        except OSError:
            continue  # closed between listing and reading
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    peers = []
    for table, width in (("/proc/self/net/tcp", 8), ("/proc/self/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            remote, inode = cols[2], cols[9]
            if inode not in inodes:
                continue
            raw = bytes.fromhex(remote.split(":")[0])
            # /proc prints each 32-bit word in host (little-endian) order.
            addr = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            ip = ipaddress.ip_address(addr[:4] if width == 8 else addr)
            if getattr(ip, "ipv4_mapped", None):
                ip = ip.ipv4_mapped
            if not (ip.is_loopback or ip.is_unspecified):
                peers.append(str(ip))
    return peers


def test_the_guard_refuses_and_records_an_outside_connection(guarded_network):
    attempts, _ = guarded_network
    with pytest.raises(OSError):
        socket.create_connection(("192.0.2.1", 80), timeout=0.1)  # TEST-NET-1: never routable
    with pytest.raises(OSError):
        socket.getaddrinfo("example.com", 443)
    assert attempts == ["create_connection ('192.0.2.1', 80)", "getaddrinfo 'example.com'"]


@pytest.mark.slow
def test_import_and_research_with_llamacpp_stay_on_the_machine(guarded_network, make_desk, fact_pdfs, tmp_path):
    attempts, allowed = guarded_network
    desk = make_desk(tmp_path / "lib")
    assert desk.settings.chat.backend == "llamacpp" and desk.settings.embedding.backend == "llamacpp"
    allowed.update(_model_hosts(desk.settings))

    report = desk.add([fact_pdfs])
    assert report.ok and report.count("added") == 2
    result = desk.research("How fast did the glacier retreat?")
    assert result.evidence, "the research found no evidence: the session did not really run"
    assert result.answer.strip()
    assert any(e.paper_id in {p.id for p in desk.papers()} for e in result.evidence)

    assert attempts == [], f"connections tried to leave the machine: {attempts}"
    assert _remote_tcp_peers() == []
