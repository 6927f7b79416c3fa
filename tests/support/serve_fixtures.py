"""Fixtures of the `vidocr serve` tests (a pytest plugin: ``pytest_plugins = ["support.serve_fixtures"]``), shared by
the API, security and browser tests for the whole session: one library of generated videos, indexed once with the
real extraction (RapidOCR), and helpers to start an app over it."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from support.synth import SynthCue, SynthSpec, TruthCue, render_video

#: The library's generated videos: name -> cues (seconds). 25 fps: one frame is 40 ms.
VIDEOS: dict[str, tuple[SynthCue, ...]] = {
    "harbour.mp4": (
        SynthCue(0.4, 1.6, "The lighthouse keeper waved"),
        SynthCue(2.0, 3.2, "Bring the boat to the harbour"),
        SynthCue(3.6, 4.8, "Nobody saw the lighthouse"),
    ),
    "sub/forest.mp4": (
        SynthCue(0.5, 1.7, "Walk quietly through the forest"),
        SynthCue(2.2, 3.4, "A lighthouse far from the sea"),
    ),
}


@dataclass
class Library:
    root: Path
    db: Path
    truth: dict[str, list[TruthCue]]
    outside: Path  # a folder beside the root with a video that must never be served

    def settings(self, **kw: Any) -> Any:
        from vidocr.serve import ServeSettings

        base = ServeSettings(roots=(self.root,), db=self.db, worker=False)
        return replace(base, **kw)


def copy_index(src: Path, dst: Path) -> None:
    """Copy a SQLite index with SQLite's backup (the WAL's pages too)."""
    source, target = sqlite3.connect(src), sqlite3.connect(dst)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()


def copy_library(library: Library, base: Path) -> Library:
    """A copy of ``library`` under ``base`` that a test may change (edits, exports, jobs): the index is copied and
    its video paths moved to the copy (no second extraction)."""
    from vidocr.index.db import open_index, transaction

    root = base / "library"
    shutil.copytree(library.root, root)
    db = base / "index.sqlite"
    copy_index(library.db, db)
    conn = open_index(db)
    try:
        old = str(library.root) + "/"
        with transaction(conn):
            conn.execute("UPDATE videos SET path = ? || substr(path, ?) WHERE substr(path, 1, ?) = ?",
                         (str(root) + "/", len(old) + 1, len(old), old))
    finally:
        conn.close()
    return replace(library, root=root, db=db)


@pytest.fixture(scope="session")
def serve_library(tmp_path_factory: pytest.TempPathFactory) -> Library:
    from vidocr.extractor import Extractor
    from vidocr.index import BuildOptions, build_index

    base = tmp_path_factory.mktemp("serve")
    root = base / "library"
    truth: dict[str, list[TruthCue]] = {}
    for i, (name, cues) in enumerate(VIDEOS.items()):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        spec = SynthSpec(width=480, height=270, duration=5.2, font_size=22, seed=i, cues=cues, cut_every=None)
        truth[name] = render_video(spec, path)
    outside = base / "private"
    outside.mkdir()
    shutil.copy(root / "harbour.mp4", outside / "secret.mp4")
    db = base / "index.sqlite"
    with Extractor() as extractor:
        report = build_index(db, [root, outside], BuildOptions(extract=extractor, lang="en"))
    assert not getattr(report, "failed", None), report
    return Library(root, db, truth, outside)


@pytest.fixture(scope="session")
def serve_client(serve_library: Library) -> Iterator[Any]:
    """A TestClient over one app (no keys, loopback, no worker) for read-only API tests."""
    from fastapi.testclient import TestClient

    from vidocr.serve.app import create_app

    with TestClient(create_app(serve_library.settings())) as client:
        yield client
