"""API keys (stored as SHA-256 hashes in the index), per-key token buckets, and short-lived media tokens.

A key is shown once, when it is created (``vidocr keys create``); the index keeps its hash, a prefix to tell keys
apart, a name and a scope: ``read`` keys search and read, ``full`` keys also submit and cancel jobs, edit cues
and write exports. Requests carry it as ``Authorization: Bearer KEY``; no cookie ever does. ``<video>`` and
``<img>`` elements cannot send that header, so the page asks for a media token (an HMAC of the video id, an
expiry and the key's id under a secret made at start-up) and puts it in those URLs: it opens one video's stream
and band images for an hour, and a revoked key's tokens stop working with it.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from vidocr.errors import ConfigError
from vidocr.index.db import transaction

SCOPES = ("read", "full")
KEY_PREFIX = "vidocr_"


@dataclass(frozen=True)
class ApiKey:
    id: int
    name: str
    prefix: str
    scope: str
    created_at: float
    revoked_at: float | None

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def create_key(conn: sqlite3.Connection, name: str, scope: str = "full") -> tuple[ApiKey, str]:
    """A new key: ``(its row, the key itself)``. The key is not stored and cannot be shown again."""
    if scope not in SCOPES:
        raise ConfigError(f"key scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    name = name.strip()
    if not name or len(name) > 100 or any(ord(ch) < 32 for ch in name):
        raise ConfigError("a key needs a name of 1 to 100 printable characters")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    now = time.time()
    with transaction(conn):
        cur = conn.execute(
            "INSERT INTO api_keys (name, prefix, hash, scope, created_at) VALUES (?, ?, ?, ?, ?)",
            (name, key[:12], _hash(key), scope, now),
        )
    return ApiKey(int(cur.lastrowid or 0), name, key[:12], scope, now, None), key


def list_keys(conn: sqlite3.Connection) -> list[ApiKey]:
    rows = conn.execute("SELECT id, name, prefix, scope, created_at, revoked_at FROM api_keys ORDER BY id")
    return [ApiKey(*r) for r in rows]


def revoke_key(conn: sqlite3.Connection, which: str) -> list[ApiKey]:
    """Revoke the key with this id, name or prefix; returns those revoked (none: ConfigError)."""
    matches = [k for k in list_keys(conn) if k.revoked_at is None and which in (str(k.id), k.name, k.prefix)]
    if not matches:
        raise ConfigError(f"no active key with the id, name or prefix {which!r} (see `vidocr keys list`)")
    if len(matches) > 1:
        raise ConfigError(f"{len(matches)} active keys match {which!r}: give the id (see `vidocr keys list`)")
    now = time.time()
    with transaction(conn):
        conn.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ?", (now, matches[0].id))
    return matches


def active_key_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL").fetchone()[0])


def verify_key(conn: sqlite3.Connection, key: str) -> ApiKey | None:
    """The active key row for ``key``, or None (unknown or revoked)."""
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        return None
    row = conn.execute(
        "SELECT id, name, prefix, scope, created_at, revoked_at FROM api_keys WHERE hash = ? AND revoked_at IS NULL",
        (_hash(key),),
    ).fetchone()
    return None if row is None else ApiKey(*row)


def key_is_active(conn: sqlite3.Connection, key_id: int) -> bool:
    row = conn.execute("SELECT 1 FROM api_keys WHERE id = ? AND revoked_at IS NULL", (key_id,)).fetchone()
    return row is not None


class MediaTokens:
    """HMAC tokens that open one video's media for ``ttl_s`` seconds (key id 0: the server runs without keys)."""

    def __init__(self, ttl_s: float = 3600.0, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)
        self._mac = hmac.new(self._secret, digestmod=hashlib.sha256)  # keyed once; each token copies it
        self.ttl_s = ttl_s

    def _sign(self, msg: str) -> str:
        mac = self._mac.copy()
        mac.update(msg.encode())
        return mac.hexdigest()[:32]

    def make(self, video_id: int, key_id: int, now: float | None = None) -> str:
        expiry = int((now or time.time()) + self.ttl_s)
        return f"{expiry}.{key_id}.{self._sign(f'{video_id}.{expiry}.{key_id}')}"

    def check(self, token: str, video_id: int, now: float | None = None) -> int | None:
        """The key id the token was made for, if it is valid for ``video_id`` and not expired."""
        try:
            expiry_s, key_s, sig = token.split(".")
            expiry, key_id = int(expiry_s), int(key_s)
        except ValueError:
            return None
        if expiry < (now or time.time()):
            return None
        good = self._sign(f"{video_id}.{expiry}.{key_id}")
        return key_id if hmac.compare_digest(good, sig) else None


class RateLimiter:
    """One token bucket per client (a key id or an address): ``rate`` tokens a second, at most ``burst``."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst = rate, float(burst)
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, who: str) -> float:
        """0.0 when a request may go now (a token is taken), else the seconds until one is available."""
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get(who, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[who] = (tokens - 1.0, now)
                return 0.0
            self._buckets[who] = (tokens, now)
            if len(self._buckets) > 100_000:  # many addresses: forget full buckets
                self._buckets = {k: v for k, v in self._buckets.items() if v[0] < self.burst}
            return (1.0 - tokens) / self.rate

    @staticmethod
    def retry_after(wait_s: float) -> str:
        return str(max(1, math.ceil(wait_s)))
