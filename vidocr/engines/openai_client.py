"""Client engine for OpenAI-compatible chat servers (vLLM's ``vllm serve``), standard library only.

Each crop is one ``/v1/chat/completions`` request with a base64 PNG data URL; ``concurrency`` requests run at
once, spread round robin over one or more base URLs. A server that refuses connections is skipped for
``dead_for`` seconds, then tried again. 429, 5xx, timeouts, dropped connections and unreadable answers are
retried with exponential backoff (Retry-After honoured); when every attempt fails the run stops with one
:class:`ServerUnreachable` error naming each server and what it answered. Before any server has answered,
connections refused by every server (nothing listens there: a wrong URL, a server not started) fail at once,
without retries; a first answer that takes over ``WAIT_NOTICE_S`` seconds is announced once (a WARNING log
line, "waiting for the server"), so a slow or unreachable host is never silent. Prompts, sampling and image size
come from the same model profiles as the local engines.

``EngineOptions.extra`` (:class:`vidocr.engines.settings.OpenAISettings`): ``base_urls`` (list or comma-separated;
default http://127.0.0.1:8000/v1), ``api_key`` (the CLI takes it from ``$VIDOCR_API_KEY``; the library reads no
environment), ``timeout`` (s), ``retries``, ``backoff`` (s), ``dead_for`` (s), ``concurrency``,
``served_model_name`` (default: the first model the server lists), ``vllm_params`` (false for a strict OpenAI
server: no top_k / repetition_penalty fields).
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import random
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from vidocr.engines import ENGINES, EngineOptions
from vidocr.engines.hunyuan_common import (
    announce_lang,
    chat_messages,
    load_profile,
    png_data_url,
    question_for,
    to_pil,
    too_small,
)
from vidocr.engines.settings import OpenAISettings, check_settings, settings_of
from vidocr.engines.vlm_output import OutputStats, parse_output
from vidocr.errors import ConfigError, EngineError
from vidocr.types import OcrResult, Task

log = logging.getLogger("vidocr")

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_FATAL_STATUS = {401, 403, 404}


#: Seconds without any answer before "waiting for the server" is logged (once per engine).
WAIT_NOTICE_S = 1.5


class ServerUnreachable(EngineError):
    """No server could be reached (nothing listens at any URL, or every attempt failed): every later request
    would fail the same way, so a batch stops here."""


class _Retry(Exception):
    def __init__(self, reason: str, down: bool = False, after: float | None = None, refused: bool = False) -> None:
        super().__init__(reason)
        self.down, self.after, self.refused = down, after, refused


def _refused(reason: object) -> bool:
    """Nothing listens there: the connection was refused, or the host name does not exist."""
    if isinstance(reason, ConnectionRefusedError):
        return True
    return isinstance(reason, socket.gaierror) and reason.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", 0))


@dataclass
class _Server:
    url: str
    dead_until: float = 0.0


def _normalize(url: str) -> str:
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "http://" + url
    return url if url.endswith("/v1") else url + "/v1"


class OpenAIEngine:
    """HunyuanOCR (or any vision chat model) behind OpenAI-compatible servers; see the module docstring."""

    name: ClassVar[str] = "openai"
    tasks: ClassVar[frozenset[Task]] = ENGINES["openai"].tasks
    #: Says itself that it waits for a server (BackgroundEngine's "loading model" lines would mislead).
    reports_waiting: ClassVar[bool] = True

    def __init__(self, options: EngineOptions) -> None:
        extra = check_settings("openai", options.extra)  # also when built directly, not through the registry
        settings = settings_of(OpenAISettings, extra)
        self.profile = load_profile(settings.profile, extra)
        self.translate_to = options.translate_to
        if self.translate_to:
            question_for(self.profile, Task.TRANSLATE, self.translate_to)
        self.lang = tuple(options.lang)
        announce_lang(self.name, self.profile, self.lang)
        urls = settings.base_urls or settings.base_url or "http://127.0.0.1:8000/v1"
        if isinstance(urls, str):
            urls = urls.split(",")
        self._servers = [_Server(_normalize(u)) for u in urls if str(u).strip()]
        if not self._servers:
            raise ConfigError("openai engine: no base URL given")
        self.timeout = settings.timeout
        self.retries = settings.retries
        self.backoff = settings.backoff
        self.max_backoff = settings.max_backoff
        self.dead_for = settings.dead_for
        self.concurrency = int(options.workers or settings.concurrency or 16 * len(self._servers))
        self.preferred_batch = int(options.batch_size or max(self.profile.batch_size, self.concurrency))
        self.vllm_params = settings.vllm_params
        self._key = settings.api_key or None
        self._lock = threading.Lock()
        self._next = 0
        self._answered = False  # a server has answered once: from then on, refused connections are retried
        self._notice: threading.Timer | None = None
        self._failed = False
        self.stats = OutputStats()
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(self.concurrency, thread_name_prefix="vidocr-openai")
        self.model = str(extra.get("served_model_name") or self.profile.served_model_name or self._first_model())
        log.info("openai: model %r on %s, %d concurrent", self.model, ", ".join(s.url for s in self._servers),
                 self.concurrency)

    # --- transport -------------------------------------------------------------------------------------
    def _pick(self) -> tuple[_Server, float]:
        """Next live server round robin; if all are resting, the one back soonest and how long to wait."""
        with self._lock:
            now = time.monotonic()
            n = len(self._servers)
            for k in range(n):
                server = self._servers[(self._next + k) % n]
                if server.dead_until <= now:
                    self._next = (self._next + k + 1) % n
                    return server, 0.0
            server = min(self._servers, key=lambda s: s.dead_until)
            return server, server.dead_until - now

    def _call(self, server: _Server, path: str, body: dict[str, Any] | None) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(server.url + path, data=data, headers=headers,
                                         method="GET" if body is None else "POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                payload = resp.read()
            self._answered = True
        except urllib.error.HTTPError as exc:
            self._answered = True
            detail = exc.read()[:300].decode("utf-8", "replace")
            if exc.code in _RETRY_STATUS:
                after = exc.headers.get("Retry-After") if exc.headers else None
                raise _Retry(f"HTTP {exc.code}", after=float(after) if after and after.isdigit() else None) from exc
            if exc.code in _FATAL_STATUS:
                raise EngineError(f"{server.url}{path}: HTTP {exc.code} {detail}") from exc
            raise _BadRequest(f"HTTP {exc.code} {detail}") from exc
        except (urllib.error.URLError, ConnectionError, http.client.HTTPException, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if _refused(reason):
                why = "connection refused" if isinstance(reason, ConnectionRefusedError) else f"unknown host ({reason})"
                raise _Retry(why, down=True, refused=True) from exc
            raise _Retry(f"{type(exc).__name__}: {reason}", down=not isinstance(reason, TimeoutError)) from exc
        try:
            return json.loads(payload)
        except ValueError as exc:
            raise _Retry(f"unreadable answer {payload[:60]!r}") from exc

    def _with_retries(self, path: str, body: dict[str, Any] | None, check: Any) -> Any:
        errors: dict[str, str] = {}
        refused: set[str] = set()
        self._start_notice()
        for attempt in range(self.retries + 1):
            server, wait = self._pick()
            if wait > 0:
                time.sleep(wait)
            try:
                answer = self._call(server, path, body)
                check(answer)
                return answer
            except _Retry as exc:
                errors[server.url] = str(exc)
                if exc.refused and not self._answered:
                    refused.add(server.url)
                    if refused >= {s.url for s in self._servers}:
                        self._fail_fast(errors)
                if attempt == self.retries:
                    break
                self.stats.add("retries")
                if exc.down:
                    with self._lock:
                        server.dead_until = time.monotonic() + self.dead_for
                    if any(s.dead_until <= time.monotonic() for s in self._servers):
                        continue  # another server is up: try it now
                delay = exc.after if exc.after is not None else min(self.max_backoff, self.backoff * 2**attempt)
                time.sleep(delay * (0.5 + random.random() / 2))
        self._stop_notice()
        tried = "; ".join(f"{url}: {why}" for url, why in errors.items())
        raise ServerUnreachable(f"no OpenAI-compatible server answered {path} after {self.retries + 1} attempts "
                                f"({tried})")

    def _fail_fast(self, errors: dict[str, str]) -> None:
        """Every server refused before any answered: nothing listens there, and retrying would only wait."""
        self._stop_notice()
        tried = "; ".join(f"{url}: {why}" for url, why in errors.items())
        raise ServerUnreachable(f"no OpenAI-compatible server answered: {tried} (is the server running? start it, "
                                "or point --server at it)")

    def _start_notice(self) -> None:
        """Log "waiting for the server" once if no server has answered ``WAIT_NOTICE_S`` seconds from now."""
        if self._answered or self._notice is not None:
            return
        with self._lock:
            if self._notice is not None:
                return
            self._notice = threading.Timer(WAIT_NOTICE_S, self._say_waiting)
            self._notice.daemon = True
            self._notice.start()

    def _stop_notice(self) -> None:
        self._failed = True  # the error says what happened: no "waiting" line after it
        if self._notice is not None:
            self._notice.cancel()

    def _say_waiting(self) -> None:
        if not (self._answered or self._failed) and self._pool is not None:
            urls = ", ".join(s.url for s in self._servers)
            log.warning("openai: waiting for the server at %s (no answer yet; up to %d attempts, %.0f s timeout "
                        "each)", urls, self.retries + 1, self.timeout)

    def _first_model(self) -> str:
        def check(answer: Any) -> None:
            if not isinstance(answer, dict) or not answer.get("data"):
                raise _Retry("no model listed")

        try:
            return str(self._with_retries("/models", None, check)["data"][0]["id"])
        except _BadRequest as exc:
            raise EngineError(f"{self._servers[0].url}/models: {exc}") from exc

    # --- OCR ---------------------------------------------------------------------------------------------
    def _body(self, question: str, image: np.ndarray) -> dict[str, Any]:
        s = self.profile.sampling
        url = png_data_url(to_pil(image, self.profile.max_pixels))
        body: dict[str, Any] = {
            "model": self.model,
            "messages": chat_messages(question, url, self.profile.system_message),
            "temperature": s.temperature,
            "max_tokens": s.max_tokens,
            "logprobs": True,
        }
        if self.vllm_params:
            body.update(top_k=s.top_k, repetition_penalty=s.repetition_penalty, skip_special_tokens=True)
            if s.ignore_eos:
                body.update(ignore_eos=True, min_tokens=s.max_tokens)
        return body

    def _one(self, image: np.ndarray, question: str, task: Task) -> OcrResult:
        if too_small(image):
            self.stats.add("tiny")
            return OcrResult()
        body = self._body(question, image)

        def check(answer: Any) -> None:
            try:
                answer["choices"][0]["message"]
            except (KeyError, IndexError, TypeError):
                raise _Retry(f"answer without choices: {str(answer)[:60]}") from None

        try:
            answer = self._with_retries("/chat/completions", body, check)
        except _BadRequest as exc:  # this image only (e.g. too many tokens): count it, keep the run going
            self.stats.add("failed")
            log.warning("openai: request refused, crop left empty: %s", exc)
            return OcrResult()
        choice = answer["choices"][0]
        text = choice["message"].get("content") or ""
        tokens = ((choice.get("logprobs") or {}).get("content")) or []
        logprobs = [t["logprob"] for t in tokens if isinstance(t, dict) and isinstance(t.get("logprob"), int | float)]
        conf = math.exp(sum(logprobs) / len(logprobs)) if logprobs else 1.0
        size = (int(image.shape[1]), int(image.shape[0]))
        truncated = choice.get("finish_reason") == "length" and not self.profile.sampling.ignore_eos
        parsed = parse_output(text, task, size=size, translate_to=self.translate_to, truncated=truncated,
                              confidence=conf)
        self.stats.record(parsed, self.name)
        return parsed.result

    def recognize(self, images: Sequence[np.ndarray], task: Task) -> list[OcrResult]:
        if self._pool is None:
            raise EngineError("openai engine is closed")
        question = question_for(self.profile, task, self.translate_to, self.lang)
        futures = [self._pool.submit(self._one, image, question, task) for image in images]
        try:
            return [f.result() for f in futures]
        finally:
            for f in futures:
                f.cancel()

    def close(self) -> None:
        if self._notice is not None:
            self._notice.cancel()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
            log.info("openai: %s", self.stats.snapshot())


class _BadRequest(Exception):
    """The server understood and refused this one request (4xx other than auth/not-found)."""
