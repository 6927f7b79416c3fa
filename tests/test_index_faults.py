"""The index under faults: a damaged page, a full disk mid-build, a read-only file or folder, a lock taken through
a link, absurd numbers, a sidecar link out of the library. Each is one line before the OCR work, or a rollback
that keeps what was stored."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from vidocr.errors import ConfigError, IndexError_
from vidocr.index import BuildOptions, SearchOptions, build_index, open_index, search
from vidocr.index.db import index_error, writer_lock
from vidocr.types import Cue, VideoInfo

ROOT = Path(__file__).resolve().parent.parent


class Fake:
    """Stands in for vidocr.extract: ``cues`` cues of long text per video, named after the file."""

    def __init__(self, cues: int = 3) -> None:
        self.calls: list[str] = []
        self.cues = cues

    def __call__(self, path: Path) -> tuple[Iterable[Cue], VideoInfo]:
        self.calls.append(path.name)
        cues = [Cue(i * 1000, i * 1000 + 900, f"{path.stem} line {i} " + "word " * 40) for i in range(self.cues)]
        return iter(cues), VideoInfo(str(path), 640, 360, 3.0, 25.0, "h264")


def library(root: Path, names: Iterable[str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / name).write_bytes(os.urandom(1500))
    return root


def hits(db: Path, query: str) -> list[str]:
    conn = open_index(db, readonly=True)
    try:
        return sorted(os.path.basename(h.video) for h in search(conn, query, SearchOptions(limit=100)).hits)
    finally:
        conn.close()


def test_a_damaged_index_is_said_before_any_ocr_work(tmp_path: Path) -> None:
    lib = library(tmp_path / "lib", [f"v{i}.mp4" for i in range(6)])
    db = tmp_path / "index.sqlite"
    build_index(db, [lib], BuildOptions(extract=Fake(40), engine="fake"))
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    data = bytearray(db.read_bytes())
    for n in range(pages // 2, pages - 1):  # scribble over the second half of the pages (cues and FTS)
        data[n * page + 8 : n * page + 200] = os.urandom(192)
    db.write_bytes(bytes(data))
    library(lib, ["new.mp4"])
    fake = Fake()
    with pytest.raises(IndexError_) as info:
        build_index(db, [lib], BuildOptions(extract=fake, engine="fake"))
    message = str(info.value)
    assert "damaged" in message and str(db) in message and "\n" not in message
    assert fake.calls == []


def test_a_full_disk_mid_build_is_one_line_and_keeps_what_was_stored(tmp_path: Path) -> None:
    lib = library(tmp_path / "lib", ["a.mp4"])
    db = tmp_path / "index.sqlite"
    build_index(db, [lib], BuildOptions(extract=Fake(), engine="fake"))
    library(lib, [f"big{i}.mp4" for i in range(30)])
    # A file size limit stands in for a full disk (SQLite then gets EFBIG instead of ENOSPC: same path).
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_index_faults import Fake
        from vidocr._cli import main
        from vidocr.index import build as build_mod
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        real = build_mod.build_index
        def limited(db, libs, options):
            resource.setrlimit(resource.RLIMIT_FSIZE, (600_000, 600_000))
            return real(db, libs, build_mod.BuildOptions(extract=Fake(200), engine="fake"))
        build_mod.build_index = limited
        sys.exit(main(["index", "build", {str(lib)!r}, "--db", {str(db)!r}, "-q"]))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 5, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "rolled back" in proc.stderr and str(db) in proc.stderr
    assert hits(db, "a") == ["a.mp4"] * 3  # what was stored before stands
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def test_sqlite_errors_become_one_clear_line() -> None:
    for text, words in [
        ("database or disk is full", "disk is full"),
        ("attempt to write a readonly database", "read-only"),
        ("database disk image is malformed", "damaged"),
        ("unable to open database file", "cannot open"),
    ]:
        err = index_error(sqlite3.OperationalError(text), "/x/index.sqlite")
        assert isinstance(err, IndexError_) and err.exit_code == 5
        assert words in str(err) and str(err).startswith("/x/index.sqlite: ")


needs_nobody = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv to drop to nobody"
)


def as_nobody(args: list[str]) -> subprocess.CompletedProcess[str]:
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m", "vidocr", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)


@pytest.fixture()
def shared_tmp() -> Iterator[Path]:
    """A folder other users may enter (pytest's own are private)."""
    base = Path(tempfile.mkdtemp(prefix="vidocr-ro-"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@needs_nobody
def test_an_index_in_a_read_only_folder_can_be_searched_but_not_built(shared_tmp: Path) -> None:
    lib = library(shared_tmp / "lib", ["a.mp4"])
    db = shared_tmp / "index.sqlite"
    build_index(db, [lib], BuildOptions(extract=Fake(), engine="fake"))
    library(lib, ["b.mp4"])
    lib.chmod(0o755)
    for path in (db, lib / "a.mp4", lib / "b.mp4"):
        path.chmod(0o644)
    searched = as_nobody(["search", "line", "--db", str(db)])
    assert searched.returncode == 0 and "a.mp4" in searched.stdout, searched.stderr
    status = as_nobody(["index", "status", "--db", str(db)])
    assert status.returncode == 0 and "1 videos" in status.stdout, status.stderr
    built = as_nobody(["index", "build", str(lib), "--db", str(db), "-q", "--workers", "1"])
    assert built.returncode == 5 and "Traceback" not in built.stderr, built.stderr
    assert len(built.stderr.strip().splitlines()) == 1 and "read-only" in built.stderr, built.stderr
    assert hits(db, "line") == ["a.mp4"] * 3


def test_the_builders_lock_is_taken_on_the_real_file(tmp_path: Path) -> None:
    db = tmp_path / "index.sqlite"
    open_index(db).close()
    link = tmp_path / "link.sqlite"
    link.symlink_to(db)
    with writer_lock(db), pytest.raises(IndexError_, match="another build is writing this index"), writer_lock(link):
        pass


def test_absurd_numbers_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vidocr._cli import main
    from vidocr.daemon.jobs import JobQueue

    db = tmp_path / "index.sqlite"
    open_index(db).close()
    JobQueue(f"{db}.jobs").close()
    for args in (
        ["search", "x", "--db", str(db), "--limit", str(2**63)],
        ["jobs", "--db", str(db), "--retry", str(10**23)],
        ["jobs", "--db", str(db), "--limit", str(10**23)],
        ["watch", str(tmp_path), "--once", "--db", str(db), "--metrics-port", "99999"],
    ):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "must be" in err, (args, err)
    queue = JobQueue(f"{db}.jobs")
    try:
        with pytest.raises(ConfigError):
            queue.retry(0)  # job 0 is not "every failed job"
    finally:
        queue.close()


def test_a_sidecar_link_out_of_the_library_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "private" / "notes.srt"
    secret.parent.mkdir()
    secret.write_text("1\n00:00:01,000 --> 00:00:02,000\nsecret words\n", encoding="utf-8")
    lib = library(tmp_path / "lib", ["film.mp4"])
    (lib / "film.srt").symlink_to(secret)
    (lib / "film.en.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nlibrary words\n", encoding="utf-8")
    db = tmp_path / "index.sqlite"
    report = build_index(db, [lib], BuildOptions(extract=Fake(), engine="fake", sidecars=True))
    assert report.sidecar_tracks == 1
    assert hits(db, "secret") == [] and hits(db, "library") == ["film.mp4"]


def test_hostile_sidecars_are_skipped_or_failed_one_by_one(tmp_path: Path) -> None:
    lib = library(tmp_path / "lib", ["film.mp4"])
    huge = "99999999999999999999999:00:00.000 --> 99999999999999999999999:00:01.000"
    (lib / "film.vtt").write_text(f"WEBVTT\n\n{huge}\nhuge\n\n00:01.000 --> 00:02.000\nkept words\n")
    (lib / "film.x.ass").write_text("[Events]\nFormat: Start, End, Text\nDialogue: 1e400:00:00.00, 0:00:01.00, x\n")
    (lib / "film.y.srt").write_bytes(os.urandom(3000))
    report = build_index(tmp_path / "index.sqlite", [lib], BuildOptions(extract=Fake(), engine="fake", sidecars=True))
    assert (report.indexed, report.sidecar_errors) == (1, 1)
    assert hits(tmp_path / "index.sqlite", "kept") == ["film.mp4"]


def test_a_damaged_index_is_one_line_for_search_and_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vidocr._cli import main

    lib = library(tmp_path / "lib", [f"v{i}.mp4" for i in range(6)])
    db = tmp_path / "index.sqlite"
    build_index(db, [lib], BuildOptions(extract=Fake(60), engine="fake"))
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page, pages = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_size", "page_count"))
    conn.close()
    data = bytearray(db.read_bytes())
    for n in range(2, pages - 1):
        data[n * page + 8 : n * page + 300] = os.urandom(292)
    db.write_bytes(bytes(data))
    for args in (["search", "word", "--db", str(db)], ["search", "line", "--db", str(db), "--video", "*v1*"],
                 ["index", "status", "--db", str(db)]):
        assert main(args) == 5, args
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "damaged" in err, (args, err)
