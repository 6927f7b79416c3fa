"""The search index on real SQLite files: build, change detection, failures, sidecars, search, concurrency."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from vidocr._cli import main as cli_main
from vidocr.errors import ConfigError, IndexError_, InputError
from vidocr.files import Stamp
from vidocr.index import BuildOptions, SearchOptions, build_index, index_status, open_index, search
from vidocr.index.db import writer_lock
from vidocr.index.store import TrackData, find_video, save_extraction, save_failure, save_video
from vidocr.index.text import fts_body, parse_query
from vidocr.types import Cue, VideoInfo

ROOT = Path(__file__).resolve().parent.parent

SCRIPTS: dict[str, list[tuple[int, int, str]]] = {
    "zh.mp4": [
        (600, 2200, "今天天气很好，我们出去走走吧"),
        (6200, 8400, "我也不知道，过去看看就明白了"),
        (11000, 11920, "好的"),
    ],
    "en.mp4": [
        (400, 2120, "I don't think that's a good idea."),
        (2520, 4000, "Wait, what did you just say?"),
        (4400, 6320, "Extraction of subtitles is hard"),
    ],
    "ja.mp4": [(1000, 2500, "東京へ行きましょう"), (3000, 4000, "カタカナのテスト")],
}


class FakeExtractor:
    """Stands in for vidocr.extract: cues from SCRIPTS by file name; names in ``failing`` raise InputError."""

    def __init__(self, failing: Iterable[str] = (), hook: Callable[[Path], None] | None = None) -> None:
        self.calls: list[str] = []
        self.failing = set(failing)
        self.hook = hook

    def __call__(self, path: Path) -> tuple[Iterable[Cue], VideoInfo]:
        self.calls.append(path.name)
        if self.hook:
            self.hook(path)
        if path.name in self.failing:
            raise InputError("cannot decode: moov atom not found", str(path))
        cues = [Cue(s, e, t) for s, e, t in SCRIPTS.get(path.name, [])]
        if path.name == "zh.mp4":
            cues[0] = Cue(600, 2200, SCRIPTS["zh.mp4"][0][2], translation="The weather is nice today")
        return iter(cues), VideoInfo(str(path), 640, 360, 12.0, 25.0, "h264")


def make_library(root: Path, names: Iterable[str] = ("zh.mp4", "en.mp4", "ja.mp4")) -> Path:
    lib = root / "lib"
    (lib / "sub").mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(names):
        folder = lib / "sub" if name.startswith("ja") else lib
        (folder / name).write_bytes(os.urandom(1000 + i))
    return lib


def build(db: Path, lib: Path | list[Path], extractor: FakeExtractor, **kw: object) -> object:
    libs = lib if isinstance(lib, list) else [lib]
    return build_index(db, libs, BuildOptions(extract=extractor, engine="fake", lang="zh", **kw))  # type: ignore[arg-type]


def texts(db: Path, query: str, **kw: object) -> list[str]:
    conn = open_index(db, readonly=True)
    try:
        return [h.text for h in search(conn, query, SearchOptions(**kw)).hits]  # type: ignore[arg-type]
    finally:
        conn.close()


@pytest.fixture()
def built(tmp_path: Path) -> tuple[Path, Path, FakeExtractor]:
    lib = make_library(tmp_path)
    db = tmp_path / "index.db"
    extractor = FakeExtractor()
    report = build(db, lib, extractor)
    assert report.indexed == 3 and report.failed == 0  # type: ignore[attr-defined]
    return db, lib, extractor


# --- text scheme ------------------------------------------------------------------------------------------


def test_fts_body_splits_cjk_runs_into_bigrams_and_last_character() -> None:
    assert fts_body("我知道了 ok") == " 我知 知道 道了 了  ok"
    assert fts_body("Ｈｅｌｌｏ") == "Hello"  # NFKC folds full-width Latin


def test_query_expressions() -> None:
    assert parse_query("知").match == '"知"*'
    assert parse_query("知道").match == '"知道"'
    assert parse_query("不知道").match == '"不知" + "知道"'
    assert parse_query("知道ok").match == '"知道" + "道" + "ok"'
    assert parse_query('hello wor* "big cat"').match == '"hello" AND "wor"* AND "big" + "cat"'
    with pytest.raises(ConfigError):
        parse_query(" ,,, ")


# --- search -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("知", ["我也不知道，过去看看就明白了"]),  # 1 character, inside a run
        ("了", ["我也不知道，过去看看就明白了"]),  # 1 character, at the end of a run
        ("好", ["今天天气很好，我们出去走走吧", "好的"]),
        ("知道", ["我也不知道，过去看看就明白了"]),  # 2 characters
        ("天气很好", ["今天天气很好，我们出去走走吧"]),  # 3+ characters
        ("明白了", ["我也不知道，过去看看就明白了"]),
        ("东京", ["東京へ行きましょう"]),  # simplified 东 finds 東 (traditional folds to simplified)
        ("東京", ["東京へ行きましょう"]),
        ("カタカナ", ["カタカナのテスト"]),
        ("ｶﾀｶﾅ", ["カタカナのテスト"]),  # half-width kana fold to full width
        ("idea", ["I don't think that's a good idea."]),
        ("IDEA", ["I don't think that's a good idea."]),
        ("ide", []),  # words match whole words ...
        ("ide*", ["I don't think that's a good idea."]),  # ... unless written as a prefix
        ("extract*", ["Extraction of subtitles is hard"]),
        ("don't", ["I don't think that's a good idea."]),
        ('"good idea"', ["I don't think that's a good idea."]),
        ('"idea good"', []),
        ("wait say", ["Wait, what did you just say?"]),
        ("wait idea", []),
    ],
)
def test_search_cjk_and_english(built: tuple[Path, Path, FakeExtractor], query: str, expected: list[str]) -> None:
    db, _, _ = built
    assert sorted(texts(db, query)) == sorted(expected)


def test_hits_carry_video_times_track_and_highlight(built: tuple[Path, Path, FakeExtractor]) -> None:
    db, lib, _ = built
    conn = open_index(db, readonly=True)
    (hit,) = search(conn, "知道").hits
    assert (hit.video, hit.start_ms, hit.end_ms) == (str(lib / "zh.mp4"), 6200, 8400)
    assert (hit.source, hit.kind, hit.lang, hit.sidecar) == ("ocr", "original", "zh", None)
    assert hit.highlighted == "我也不[知道]，过去看看就明白了"
    assert hit.spans == ((3, 5),)
    (hit,) = search(conn, "extract*", SearchOptions(marks=("<b>", "</b>"))).hits
    assert hit.highlighted == "<b>Extraction</b> of subtitles is hard"
    (hit,) = search(conn, "weather").hits  # the engine's translation is its own track
    assert (hit.kind, hit.start_ms, hit.highlighted) == ("translation", 600, "The [weather] is nice today")
    conn.close()


def test_an_extraction_is_stored_without_lines_of_no_text_and_with_its_translation(tmp_path: Path) -> None:
    conn = open_index(tmp_path / "i.db")
    cues = [Cue(0, 900, "你好"), Cue(1000, 1900, "", translation="a translation alone"),
            Cue(2000, 2900, "再见", translation="Goodbye")]
    tracks = save_extraction(conn, "/v/a.mp4", Stamp(1, 1), "h", cues, engine="x", duration_s=3.0,
                             lang="zh", translation_lang="en")
    rows = conn.execute("SELECT t.kind, t.lang, c.start_ms, c.text FROM cues c JOIN tracks t ON t.id = c.track_id"
                        " ORDER BY t.id, c.start_ms").fetchall()
    assert rows == [("original", "zh", 0, "你好"), ("original", "zh", 2000, "再见"),
                    ("translation", "en", 1000, "a translation alone"), ("translation", "en", 2000, "Goodbye")]
    assert [len(t.cues) for t in tracks] == [2, 2]
    row = find_video(conn, "/v/a.mp4")
    assert row is not None and (row.status, row.stamp, row.hash) == ("ok", Stamp(1, 1), "h")
    save_failure(conn, "/v/a.mp4", Stamp(2, 2), None, "cannot decode", engine="x")
    row = find_video(conn, "/v/a.mp4")
    assert row is not None and (row.status, row.error, row.stamp) == ("failed", "cannot decode", Stamp(2, 2))
    assert conn.execute("SELECT count(*) FROM cues").fetchone()[0] == 0 and find_video(conn, "/v/b.mp4") is None
    conn.close()


def test_bm25_ranks_denser_matches_first(tmp_path: Path) -> None:
    conn = open_index(tmp_path / "i.db")
    cues = [(0, 1, "the cat sat on a very long mat with many other words around it"), (1, 2, "cat cat cat")]
    cues += [(i, i + 1, f"filler line number {i}") for i in range(2, 50)]
    save_video(conn, "/v/a.mp4", Stamp(1, 1), None, [TrackData("ocr", "original", None, cues)], engine="x")
    hits = search(conn, "cat").hits
    assert [h.text for h in hits] == ["cat cat cat", cues[0][2]]
    assert hits[0].score > hits[1].score > 0


def test_very_common_queries_are_ranked_in_a_window_of_newest_matches(tmp_path: Path) -> None:
    conn = open_index(tmp_path / "i.db")
    cues = [(i, i + 1, "cat " * (1 + i % 3)) for i in range(30)]
    save_video(conn, "/v/a.mp4", Stamp(1, 1), None, [TrackData("ocr", "original", None, cues)], engine="x")
    full = search(conn, "cat", SearchOptions(limit=100))
    windowed = search(conn, "cat", SearchOptions(limit=100, rank_window=5))
    assert not full.windowed and len(full.hits) == 30
    assert windowed.windowed and sorted(h.start_ms for h in windowed.hits) == [25, 26, 27, 28, 29]


def test_filters_by_video_glob_and_language(built: tuple[Path, Path, FakeExtractor]) -> None:
    db, _, _ = built
    assert texts(db, "好") != []
    assert texts(db, "好", video="en.*") == []
    assert len(texts(db, "好", video="zh.mp4")) == 2
    assert len(texts(db, "好", video="*/lib/*")) == 2
    assert len(texts(db, "好", lang="zh")) == 2
    assert texts(db, "好", lang="en") == []


# --- build: change detection, failures, prune, moves, sidecars --------------------------------------------


def test_noop_reindex_does_no_extraction(built: tuple[Path, Path, FakeExtractor]) -> None:
    db, lib, _ = built
    again = FakeExtractor()
    report = build(db, lib, again)
    assert again.calls == []
    assert (report.seen, report.unchanged, report.extracted) == (3, 3, 0)  # type: ignore[attr-defined]


def test_touched_copied_and_moved_files_keep_their_cues_without_extraction(
    built: tuple[Path, Path, FakeExtractor],
) -> None:
    db, lib, _ = built
    zh = lib / "zh.mp4"
    os.utime(zh, ns=(1_000_000_000, 1_000_000_000))  # touched: same size, other time -> content hash decides
    (lib / "sub" / "ja.mp4").rename(lib / "ja-moved.mp4")
    again = FakeExtractor()
    report = build(db, lib, again)
    assert again.calls == []
    assert (report.unchanged, report.moved) == (2, 1)  # type: ignore[attr-defined]
    conn = open_index(db, readonly=True)
    assert search(conn, "東京").hits[0].video == str(lib / "ja-moved.mp4")


def test_changed_video_is_extracted_again(built: tuple[Path, Path, FakeExtractor]) -> None:
    db, lib, _ = built
    with (lib / "en.mp4").open("ab") as fh:
        fh.write(b"more")
    again = FakeExtractor()
    report = build(db, lib, again)
    assert again.calls == ["en.mp4"] and report.updated == 1  # type: ignore[attr-defined]
    assert len(texts(db, "idea")) == 1  # old cues replaced, not duplicated


def test_failed_videos_are_recorded_and_retried_only_when_changed_or_asked(tmp_path: Path) -> None:
    lib = make_library(tmp_path)
    (lib / "broken.mp4").write_bytes(b"not a video")
    db = tmp_path / "index.db"
    first = FakeExtractor(failing={"broken.mp4"})
    report = build(db, lib, first)
    assert report.failed == 1 and report.indexed == 3  # type: ignore[attr-defined]
    conn = open_index(db, readonly=True)
    assert index_status(conn, db).failures == [(str(lib / "broken.mp4"), "cannot decode: moov atom not found")]
    conn.close()

    unchanged = FakeExtractor(failing={"broken.mp4"})
    assert build(db, lib, unchanged).failed_skipped == 1 and unchanged.calls == []  # type: ignore[attr-defined]

    retried = FakeExtractor(failing={"broken.mp4"})
    build(db, lib, retried, retry_failed=True)
    assert retried.calls == ["broken.mp4"]

    (lib / "broken.mp4").write_bytes(b"fixed now, longer")
    fixed = FakeExtractor()
    report = build(db, lib, fixed)
    assert fixed.calls == ["broken.mp4"] and report.failed == 0  # type: ignore[attr-defined]
    conn = open_index(db, readonly=True)
    assert index_status(conn, db).failed == 0


def test_engine_errors_stop_the_build_instead_of_failing_every_video(tmp_path: Path) -> None:
    from vidocr.errors import EngineError

    def broken_engine(path: Path) -> None:
        raise EngineError("server unreachable")

    db = tmp_path / "index.db"
    with pytest.raises(EngineError):
        build(db, make_library(tmp_path), FakeExtractor(hook=broken_engine))
    conn = open_index(db, readonly=True)
    assert index_status(conn, db).videos == 0


def test_prune_removes_deleted_videos_only_when_asked(built: tuple[Path, Path, FakeExtractor]) -> None:
    db, lib, _ = built
    (lib / "en.mp4").unlink()
    report = build(db, lib, FakeExtractor())
    assert report.missing == 1 and texts(db, "idea")  # type: ignore[attr-defined]
    report = build(db, lib / "sub", FakeExtractor(), prune=True)  # another library: en.mp4 is out of its scope
    assert report.pruned == 0 and texts(db, "idea")  # type: ignore[attr-defined]
    report = build(db, lib, FakeExtractor(), prune=True)
    assert report.pruned == 1 and texts(db, "idea") == []  # type: ignore[attr-defined]
    assert texts(db, "知道")


def test_sidecars_are_imported_marked_and_followed(built: tuple[Path, Path, FakeExtractor]) -> None:
    db, lib, _ = built
    (lib / "en.srt").write_text("1\n00:00:01,000 --> 00:00:02,500\nA <i>sidecar</i> line\n\n", encoding="utf-8")
    (lib / "en.zh-Hans.vtt").write_text(
        "WEBVTT\n\nintro\n00:00:03.000 --> 00:00:04.000 align:start\n<c.yellow>旁边的字幕</c>\n", encoding="utf-8"
    )
    (lib / "zh.ja.ass").write_text(
        "[Script Info]\nTitle: x\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, "
        "Effect, Text\nDialogue: 0,0:00:05.50,0:00:07.00,Default,,0,0,0,,{\\b1}字幕, 日本語\\Nsecond line\n",
        encoding="utf-8",
    )
    (lib / "other.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nsidecar of nothing\n", encoding="utf-8")
    extractor = FakeExtractor()
    report = build(db, lib, extractor, sidecars=True)
    assert extractor.calls == [] and report.sidecar_tracks == 3  # type: ignore[attr-defined]
    conn = open_index(db, readonly=True)
    (hit,) = search(conn, "sidecar").hits
    assert (hit.source, hit.sidecar, hit.lang, hit.start_ms, hit.text) == (
        "sidecar",
        str(lib / "en.srt"),
        None,
        1000,
        "A sidecar line",
    )
    (hit,) = search(conn, "旁边").hits
    assert (hit.video, hit.lang, hit.start_ms, hit.end_ms) == (str(lib / "en.mp4"), "zh-Hans", 3000, 4000)
    (hit,) = search(conn, "日本語").hits
    assert (hit.video, hit.lang, hit.text) == (str(lib / "zh.mp4"), "ja", "字幕, 日本語\nsecond line")
    conn.close()

    again = build(db, lib, FakeExtractor(), sidecars=True)
    assert again.sidecar_tracks == 0  # type: ignore[attr-defined]
    (lib / "en.srt").write_text("1\n00:00:01,000 --> 00:00:02,500\nreplaced text here\n", encoding="utf-8")
    (lib / "zh.ja.ass").unlink()
    assert build(db, lib, FakeExtractor(), sidecars=True).sidecar_tracks == 1  # type: ignore[attr-defined]
    assert texts(db, "sidecar") == [] and texts(db, "replaced") == ["replaced text here"]
    assert texts(db, "日本語") == []


def test_progress_callback_errors_do_not_break_the_build(tmp_path: Path) -> None:
    events: list[str] = []

    def progress(event: object) -> None:
        events.append(event.outcome)  # type: ignore[attr-defined]
        raise RuntimeError("display broke")

    report = build(tmp_path / "i.db", make_library(tmp_path), FakeExtractor(), progress=progress)
    assert report.indexed == 3 and events == ["start", "indexed"] * 3  # type: ignore[attr-defined]


# --- concurrency ------------------------------------------------------------------------------------------


def test_search_works_while_a_build_writes(tmp_path: Path) -> None:
    lib = make_library(tmp_path)
    db = tmp_path / "index.db"
    in_second = threading.Event()
    release = threading.Event()

    def hook(path: Path) -> None:
        if path.name == "zh.mp4":  # sorted: en.mp4 is stored, ja.mp4 (sub/) comes after
            in_second.set()
            assert release.wait(10)

    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(build(db, lib, FakeExtractor(hook=hook))))
    worker.start()
    try:
        assert in_second.wait(10)
        assert texts(db, "idea") == ["I don't think that's a good idea."]
        assert texts(db, "知道") == []
        # A write transaction held open (cues inserted, not committed) shows nothing early and blocks no reader.
        writer = open_index(db)
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO videos VALUES (99, '/x.mp4', 1, 1, NULL, 'ok', NULL, NULL, NULL, 0)")
        writer.execute("INSERT INTO tracks (id, video_id, source, kind) VALUES (99, 99, 'ocr', 'original')")
        writer.execute("INSERT INTO cues (track_id, start_ms, end_ms, text) VALUES (99, 0, 1, 'uncommitted words')")
        try:
            started = time.monotonic()
            assert texts(db, "uncommitted") == []
            assert time.monotonic() - started < 1.0
        finally:
            writer.execute("ROLLBACK")
            writer.close()
    finally:
        release.set()
        worker.join(10)
    assert result and texts(db, "知道") == ["我也不知道，过去看看就明白了"]


def test_readers_never_wait_for_a_stream_of_commits(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    writer = open_index(db)
    assert writer.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    stop = threading.Event()

    def write() -> None:
        for i in range(300):
            cues = [(j, j + 1, f"commit number {i} line {j}") for j in range(20)]
            save_video(writer, f"/v/{i}.mp4", Stamp(i, i), None, [TrackData("ocr", "original", None, cues)], engine="x")
        stop.set()

    thread = threading.Thread(target=write)
    thread.start()
    counts = []
    reader = open_index(db, readonly=True, busy_timeout_s=0)  # any wait for the writer would raise "locked"
    try:
        while not stop.is_set():
            counts.append(len(search(reader, "commit", SearchOptions(limit=10_000)).hits))
    finally:
        thread.join(60)
        reader.close()
        writer.close()
    assert len(counts) > 5 and counts == sorted(counts)  # every snapshot is consistent and moves forward
    assert texts(db, "commit", limit=10_000).__len__() == 6000


def test_two_builders_one_fails_clearly_or_waits(tmp_path: Path) -> None:
    lib = make_library(tmp_path)
    db = tmp_path / "index.db"
    busy = threading.Event()
    release = threading.Event()

    def hook(path: Path) -> None:
        busy.set()
        assert release.wait(10)

    first = FakeExtractor(hook=hook)
    worker = threading.Thread(target=lambda: build(db, lib, first))
    worker.start()
    try:
        assert busy.wait(10)
        second = FakeExtractor()
        with pytest.raises(IndexError_, match="another build is writing this index"):
            build(db, lib, second)
        assert second.calls == []
        waited: list[object] = []
        waiter = threading.Thread(target=lambda: waited.append(build(db, lib, second, lock_timeout_s=20)))
        waiter.start()
        time.sleep(0.3)
        assert not waited  # still waiting for the lock
    finally:
        release.set()
        worker.join(10)
    waiter.join(20)
    assert waited and second.calls == []  # the first builder did the work; the second found nothing new
    assert len(texts(db, "知道")) == 1
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM videos").fetchone()[0] == 3


def test_builder_in_another_process_reports_the_lock_and_exits(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    open_index(db).close()
    (tmp_path / "empty").mkdir()
    with writer_lock(db):
        proc = subprocess.run(
            [sys.executable, "-m", "vidocr", "index", "build", str(tmp_path / "empty"), "--db", str(db)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
    assert proc.returncode == 5
    assert proc.stderr.strip().startswith("error: ") and "another build is writing this index" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# --- bad index files --------------------------------------------------------------------------------------


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_a_file_that_is_not_sqlite_is_refused_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "notes.db"
    db.write_bytes(b"these are my notes, not a database\n" * 50)
    lib = make_library(tmp_path / "x")
    before = _snapshot(tmp_path)
    with pytest.raises(IndexError_, match="not an SQLite database"):
        build(db, lib, FakeExtractor())
    with pytest.raises(IndexError_, match="not an SQLite database"):
        open_index(db, readonly=True)
    assert _snapshot(tmp_path) == before


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE accounts (id INTEGER)")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    with pytest.raises(IndexError_, match="another program"):
        open_index(db)
    assert db.read_bytes() == before


def test_an_index_from_a_newer_vidocr_is_refused_unchanged(built: tuple[Path, Path, FakeExtractor]) -> None:
    db, lib, _ = built
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=DELETE")  # fold the WAL in, so the file alone is the database
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    before = _snapshot(db.parent)
    extractor = FakeExtractor()
    with pytest.raises(IndexError_, match="newer than this vidocr"):
        build(db, lib, extractor, force=True)
    with pytest.raises(IndexError_, match="newer than this vidocr"):
        open_index(db, readonly=True)
    assert extractor.calls == [] and _snapshot(db.parent) == before


# --- CLI --------------------------------------------------------------------------------------------------


def test_cli_search_human_and_json(built: tuple[Path, Path, FakeExtractor], capsys: pytest.CaptureFixture[str]) -> None:
    db, lib, _ = built
    assert cli_main(["search", "知道", "--db", str(db)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{lib / 'zh.mp4'}  00:00:06.200  我也不[知道]，过去看看就明白了",
        f"    mpv --start=00:00:06.200 {lib / 'zh.mp4'}",
    ]
    assert cli_main(["search", "weather", "--db", str(db), "--json", "--limit", "5"]) == 0
    data = json.loads(capsys.readouterr().out)
    (hit,) = data["hits"]
    assert hit["track"] == {"source": "ocr", "kind": "translation", "lang": None, "sidecar": None}
    assert (hit["start"], hit["play"]) == ("00:00:00.600", f"mpv --start=00:00:00.600 {lib / 'zh.mp4'}")


def test_cli_errors_are_one_line_with_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["search", "x", "--db", str(tmp_path / "missing.db")]) == 5
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no index here" in err and len(err.strip().splitlines()) == 1
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"\x00garbage" * 100)
    assert cli_main(["index", "status", "--db", str(bad)]) == 5
    assert "not an SQLite database" in capsys.readouterr().err
    open_index(tmp_path / "ok.db").close()
    assert cli_main(["search", "!!!", "--db", str(tmp_path / "ok.db")]) == 2
    assert "nothing to search for" in capsys.readouterr().err
    assert cli_main(["index", "build", str(tmp_path / "nope"), "--db", str(tmp_path / "ok.db")]) == 2


def test_cli_status_lists_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lib = make_library(tmp_path, ["bad.mp4", "en.mp4"])
    db = tmp_path / "index.db"
    build(db, lib, FakeExtractor(failing={"bad.mp4"}))
    assert cli_main(["index", "status", "--db", str(db)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "2 videos (1 failed), 3 cues" in out[0]
    assert out[1:] == [f"  failed: {lib / 'bad.mp4'}: cannot decode: moov atom not found"]


# --- real extraction --------------------------------------------------------------------------------------


def _pipeline_available() -> bool:
    try:
        import vidocr.pipeline  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _pipeline_available(), reason="vidocr.pipeline not importable yet")
def test_real_extraction_of_sample_videos(tmp_path: Path, rapid_engine: object) -> None:
    import vidocr
    from vidocr.pipeline import ExtractOptions

    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("zh.mp4", "en.mp4"):
        shutil.copy(ROOT / "samples" / name, lib / name)
    calls: list[str] = []

    def extract(path: Path) -> tuple[Iterable[Cue], VideoInfo]:
        calls.append(path.name)
        return vidocr.extract(path, ExtractOptions(), engine=rapid_engine)  # type: ignore[arg-type]

    db = tmp_path / "index.db"
    report = build_index(db, [lib], BuildOptions(extract=extract))
    assert report.indexed == 2 and report.failed == 0 and report.cues >= 6
    conn = open_index(db, readonly=True)
    hits = search(conn, "知道").hits  # samples/zh.srt: 00:00:06,200 我也不知道，过去看看就明白了
    assert hits and hits[0].video == str(lib / "zh.mp4") and abs(hits[0].start_ms - 6200) <= 300
    hits = search(conn, "idea").hits  # samples/en.srt: 00:00:00,400 I don't think that's a good idea.
    assert hits and hits[0].video == str(lib / "en.mp4") and abs(hits[0].start_ms - 400) <= 300
    conn.close()
    build_index(db, [lib], BuildOptions(extract=extract))
    assert calls == ["en.mp4", "zh.mp4"]  # the second build extracted nothing
