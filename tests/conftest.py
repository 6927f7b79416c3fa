from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
REAL = Path(os.environ.get("VIDOCR_REAL_DATA", ROOT.parent / "shared" / "data" / "real"))


@pytest.fixture(scope="session")
def samples() -> Path:
    return SAMPLES


@pytest.fixture()
def two_videos(tmp_path: Path, samples: Path) -> list[str]:
    """Two sample videos copied into the test's folder (a batch of two)."""
    paths = []
    for name in ("short_cue.mp4", "repeat_gap.mp4"):
        shutil.copy(samples / name, tmp_path / name)
        paths.append(str(tmp_path / name))
    return paths


@pytest.fixture(scope="session")
def real_data() -> Path:
    if not REAL.is_dir():
        pytest.skip(f"real clips not available ({REAL})")
    return REAL


@pytest.fixture(scope="session")
def rapid_engine() -> Iterator[object]:
    """One in-process RapidOCR engine for the whole session (model load ~1 s)."""
    from vidocr.engines import EngineOptions
    from vidocr.engines.rapid import RapidOcrEngine

    engine = RapidOcrEngine(EngineOptions(workers=1))
    yield engine
    engine.close()


@pytest.fixture(autouse=True)
def no_unexpected_errors(caplog: pytest.LogCaptureFixture, request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test when vidocr logs at ERROR unless the test is marked ``allow_error_logs``."""
    caplog.set_level(logging.WARNING, logger="vidocr")
    yield
    if request.node.get_closest_marker("allow_error_logs"):
        return
    errors = [r for r in caplog.get_records("call") if r.levelno >= logging.ERROR and r.name.startswith("vidocr")]
    assert not errors, f"unexpected error logs: {[r.getMessage() for r in errors]}"


@pytest.fixture(autouse=True)
def private_default_index(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands without --db use $VIDOCR_DB or the XDG data dir: point both away from the user's real index."""
    monkeypatch.delenv("VIDOCR_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
