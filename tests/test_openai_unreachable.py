"""``--engine openai`` when no server answers (issue #12): refused connections fail at once, with one line naming
every server; a slow first answer is announced once; a server that answered before is retried, not given up."""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_openai_engine import FakeServer, crops

from vidocr._cli import main
from vidocr.engines import EngineOptions, create_engine, openai_client
from vidocr.engines.openai_client import ServerUnreachable
from vidocr.types import Task

pytestmark = pytest.mark.timeout(120)


def refused_port() -> int:
    """A port nothing listens on: bound, then closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SleepSpy:
    """Stands in for the ``time`` module inside openai_client: records every sleep (retry backoff, dead-server
    waits) and passes everything else to the real module."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        time.sleep(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> Iterator[SleepSpy]:
    spy = SleepSpy()
    monkeypatch.setattr(openai_client, "time", spy)
    yield spy


def make(urls: list[str], **extra: Any) -> openai_client.OpenAIEngine:
    engine = create_engine("openai", EngineOptions(workers=2, extra={"base_urls": urls, **extra}))
    assert isinstance(engine, openai_client.OpenAIEngine)
    return engine


def test_refused_by_every_server_fails_at_once_naming_each(sleeps: SleepSpy, caplog: pytest.LogCaptureFixture) -> None:
    urls = [f"http://127.0.0.1:{refused_port()}/v1", f"http://127.0.0.1:{refused_port()}/v1"]
    with pytest.raises(ServerUnreachable) as err:
        make(urls)  # default retries (6) and backoff: none of them is spent on a refused connection
    message = str(err.value)
    assert "\n" not in message and message.count("connection refused") == 2, message
    assert all(url in message for url in urls) and "--server" in message
    assert sleeps.sleeps == []  # no backoff, no waiting for a "dead" server to come back
    assert not [r for r in caplog.records if "waiting for the server" in r.getMessage()]


def test_a_silent_server_is_announced_once_then_fails(sleeps: SleepSpy, caplog: pytest.LogCaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # A socket that accepts connections (the kernel's backlog) but never answers: a hung or overloaded host.
    monkeypatch.setattr(openai_client, "WAIT_NOTICE_S", 0.05)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        with pytest.raises(ServerUnreachable) as err:
            make([url], retries=0, timeout=2)
    assert "TimeoutError" in str(err.value) or "timed out" in str(err.value)
    waiting = [r.getMessage() for r in caplog.records if "waiting for the server" in r.getMessage()]
    assert len(waiting) == 1 and url in waiting[0], waiting


def test_a_server_that_answered_before_is_retried_when_it_refuses(sleeps: SleepSpy) -> None:
    fake = FakeServer()
    engine = make([fake.url], retries=2, backoff=0.01, max_backoff=0.02, dead_for=0.05)
    try:
        assert [r.text for r in engine.recognize(crops(1), Task.SUBTITLE)] == ["hello"]
        fake.close()  # the server goes away mid-run (a restart): not "nothing listens here"
        with pytest.raises(ServerUnreachable) as err:
            engine.recognize(crops(1), Task.SUBTITLE)
    finally:
        engine.close()
    assert "after 3 attempts" in str(err.value)
    assert sleeps.sleeps  # it waited and tried again


def test_cli_with_no_server_is_one_line_exit_4_for_the_whole_batch(samples: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    videos = []
    for name in ("short_cue.mp4", "repeat_gap.mp4"):
        shutil.copy(samples / name, tmp_path / name)
        videos.append(str(tmp_path / name))
    urls = [f"http://127.0.0.1:{refused_port()}/v1", f"http://127.0.0.1:{refused_port()}/v1"]
    servers = [arg for url in urls for arg in ("--server", url)]
    code = main(["extract", *videos, "--engine", "openai", *servers, "-o", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 4, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "connection refused" in lines[0], err
    assert all(url in lines[0] for url in urls)
    assert "loading model" not in err and "Traceback" not in err and out == ""
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
