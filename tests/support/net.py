"""Network helpers of the tests."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback port nothing listens on right now (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
