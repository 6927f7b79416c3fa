"""The ``openai`` engine against a scripted stdlib HTTP server: retries, round robin, dead servers, errors.

No vllm, no network beyond 127.0.0.1. The real-server test lives in tests/test_hunyuan_vllm_server.py.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from support.net import free_port

from vidocr.engines import EngineOptions, create_engine
from vidocr.engines.openai_client import OpenAIEngine
from vidocr.errors import EngineError
from vidocr.types import Task

pytestmark = pytest.mark.timeout(60)

Reply = tuple[int, Any, dict[str, str]]


def ok(text: str, finish: str = "stop") -> Reply:
    choice = {"message": {"role": "assistant", "content": text}, "finish_reason": finish,
              "logprobs": {"content": [{"token": "x", "logprob": -0.1}]}}
    return 200, {"choices": [choice]}, {}


def image_of(body: dict[str, Any]) -> np.ndarray:
    url = body["messages"][-1]["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))


class FakeServer:
    """Answers /v1/models, and /v1/chat/completions from a script (then from ``default``)."""

    def __init__(self, script: list[Reply] | None = None, default: Callable[[dict[str, Any]], Reply] | None = None,
                 port: int = 0) -> None:
        self.script = list(script or [])
        self.default = default or (lambda body: ok("hello"))
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, reply: Reply) -> None:
                status, payload, headers = reply
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                self._send((200, {"data": [{"id": "fake-ocr"}]}, {}))

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.bodies.append(body)
                    outer.headers.append(dict(self.headers))
                    reply = outer.script.pop(0) if outer.script else None
                self._send(reply or outer.default(body))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def servers() -> Iterator[list[FakeServer]]:
    made: list[FakeServer] = []
    yield made
    for s in made:
        s.close()


def engine(urls: list[str], **extra: Any) -> OpenAIEngine:
    workers = extra.pop("workers", 4)
    opts = {"base_urls": urls, "backoff": 0.01, "max_backoff": 0.05, "timeout": 5, "dead_for": 0.3, **extra}
    eng = create_engine("openai", EngineOptions(workers=workers, extra=opts))
    assert isinstance(eng, OpenAIEngine)
    return eng


def crops(n: int) -> list[np.ndarray]:
    out = []
    for i in range(n):
        img = np.zeros((40, 160, 3), np.uint8)
        img[:, :, 0] = i  # blue channel carries the index (BGR in, RGB on the wire)
        out.append(img)
    return out


def test_retries_429_500_garbage_then_succeeds(servers: list[FakeServer]) -> None:
    fake = FakeServer([(429, {"error": "busy"}, {"Retry-After": "0"}), (500, {"error": "oops"}, {}),
                       (200, b"<html>proxy error</html>", {}), (200, {"nothing": 1}, {})],
                      default=lambda body: ok("第一行\n second line "))
    servers.append(fake)
    eng = engine([fake.url])
    try:
        [result] = eng.recognize(crops(1), Task.SUBTITLE)
    finally:
        eng.close()
    assert [line.text for line in result.lines] == ["第一行", "second line"]
    assert result.lines[0].confidence == pytest.approx(np.exp(-0.1))
    assert len(fake.bodies) == 5
    assert eng.stats.snapshot()["retries"] == 4


def test_request_carries_profile_prompt_image_and_sampling(servers: list[FakeServer]) -> None:
    fake = FakeServer()
    servers.append(fake)
    eng = engine([fake.url.removesuffix("/v1")], api_key="sekret", max_pixels=40 * 160)
    try:
        eng.recognize(crops(1)[:1] + [np.full((100, 320, 3), 7, np.uint8)], Task.SUBTITLE)
    finally:
        eng.close()
    body = fake.bodies[0]
    assert body["model"] == "fake-ocr"
    assert body["messages"][0] == {"role": "system", "content": ""}
    assert body["messages"][1]["content"][1] == {"type": "text", "text": "提取图片中的字幕。"}
    assert (body["temperature"], body["top_k"], body["max_tokens"]) == (0.0, 1, 96)
    assert fake.headers[0]["Authorization"] == "Bearer sekret"
    small, big = sorted((image_of(b).shape for b in fake.bodies), key=lambda s: s[0])
    assert small == (40, 160, 3)  # within max_pixels: sent as is
    assert big[0] * big[1] <= 40 * 160 and big[1] / big[0] == pytest.approx(3.2, rel=0.05)  # scaled, aspect kept


def test_results_keep_input_order_under_concurrency(servers: list[FakeServer]) -> None:
    def by_image(body: dict[str, Any]) -> Reply:
        index = int(image_of(body)[0, 0, 2])  # RGB: red = the BGR blue we wrote
        time.sleep(0.002 * ((index * 7) % 5))
        return ok(f"crop {index}")

    fake = FakeServer(default=by_image)
    servers.append(fake)
    eng = engine([fake.url], workers=8)
    try:
        results = eng.recognize(crops(24), Task.SUBTITLE)
    finally:
        eng.close()
    assert [r.text for r in results] == [f"crop {i}" for i in range(24)]


def test_round_robin_skips_dead_server_and_retries_it_later(servers: list[FakeServer]) -> None:
    live = FakeServer(default=lambda body: ok("live"))
    servers.append(live)
    port = free_port()
    eng = engine([f"http://127.0.0.1:{port}/v1", live.url], served_model_name="m", workers=2)
    try:
        first = eng.recognize(crops(6), Task.SUBTITLE)
        assert [r.text for r in first] == ["live"] * 6
        revived = FakeServer(default=lambda body: ok("revived"), port=port)
        servers.append(revived)
        time.sleep(0.4)  # longer than dead_for
        second = eng.recognize(crops(6), Task.SUBTITLE)
    finally:
        eng.close()
    assert {r.text for r in second} == {"live", "revived"}
    assert len(revived.bodies) >= 2


def test_no_server_answers_is_one_clear_error() -> None:
    ports = [free_port(), free_port()]
    with pytest.raises(EngineError) as err:
        engine([f"http://127.0.0.1:{p}" for p in ports], retries=2)
    message = str(err.value)
    assert "no OpenAI-compatible server answered" in message
    assert all(f"127.0.0.1:{p}" in message for p in ports)


def test_auth_failure_stops_at_once_and_bad_request_only_empties_its_crop(servers: list[FakeServer]) -> None:
    fake = FakeServer([(400, {"error": "image too large"}, {})], default=lambda body: ok("fine"))
    servers.append(fake)
    eng = engine([fake.url], workers=1)
    try:
        results = eng.recognize(crops(2), Task.SUBTITLE)
        assert [r.text for r in results] == ["", "fine"]
        assert eng.stats.snapshot()["failed"] == 1
        fake.script.append((401, {"error": "bad key"}, {}))
        with pytest.raises(EngineError, match="HTTP 401"):
            eng.recognize(crops(1), Task.SUBTITLE)
    finally:
        eng.close()


def test_translation_keeps_original_and_translation(servers: list[FakeServer]) -> None:
    fake = FakeServer(default=lambda body: ok("对不起 我是诺曼·斯佩尔曼\nSorry, I'm Norm Spellman."))
    servers.append(fake)
    eng = create_engine("openai", EngineOptions(translate_to="en", extra={"base_urls": fake.url}))
    try:
        [result] = eng.recognize(crops(1), Task.TRANSLATE)
    finally:
        eng.close()
    assert result.text == "对不起 我是诺曼·斯佩尔曼"
    assert result.translation == "Sorry, I'm Norm Spellman."
    assert "翻译为英文" in fake.bodies[0]["messages"][1]["content"][1]["text"]


def test_overlong_and_garbage_answers_are_counted_not_raised(servers: list[FakeServer]) -> None:
    fake = FakeServer([ok("abc" * 30, finish="length"), ok("...!!!")])
    servers.append(fake)
    eng = engine([fake.url], workers=1)
    try:
        looped, garbage = eng.recognize(crops(2), Task.SUBTITLE)
    finally:
        eng.close()
    assert looped.text == "abc"
    assert garbage.lines == ()
    stats = eng.stats.snapshot()
    assert (stats["overlong"], stats["loop_cut"], stats["garbage"], stats["requests"]) == (1, 1, 1, 2)


def test_lang_hint_is_the_profile_prompt_for_the_language(servers: list[FakeServer], tmp_path: Path) -> None:
    profile = tmp_path / "with-lang.yaml"
    profile.write_text("prompts:\n  subtitle: 提取图片中的字幕。\n  lang:\n    ko: 提取图片中的韩文字幕。\n",
                       encoding="utf-8")
    fake = FakeServer()
    servers.append(fake)
    for lang, prompt in ((("ko",), "提取图片中的韩文字幕。"), (("ru",), "提取图片中的字幕。")):
        opts = {"base_urls": [fake.url], "timeout": 5, "profile": str(profile)}
        eng = create_engine("openai", EngineOptions(workers=1, lang=lang, extra=opts))
        try:
            eng.recognize(crops(1), Task.SUBTITLE)
        finally:
            eng.close()
        assert fake.bodies[-1]["messages"][1]["content"][1] == {"type": "text", "text": prompt}
