"""Hostile names and trees: names that are not UTF-8 or hold a newline, trees 1,100 levels deep, symbolic link
loops, a video named like a subtitle file; from discovery through extract, index build and the watcher."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from vidocr.discover import iter_videos
from vidocr.errors import InputError, display_path
from vidocr.index import BuildOptions, SearchOptions, build_index, open_index, search
from vidocr.types import Cue, VideoInfo
from vidocr.video import VideoSource

LATIN1 = os.fsdecode(b"caf\xe9")  # "café" in Latin-1: not UTF-8, kept by Python as a surrogate escape
DEPTH = 1100


class Fake:
    """Stands in for vidocr.extract in index builds: one cue per video, named after the file."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, path: Path) -> tuple[Iterable[Cue], VideoInfo]:
        self.calls.append(str(path))
        return iter([Cue(500, 1500, "hostile names")]), VideoInfo(str(path), 640, 360, 3.0, 25.0, "h264")


@pytest.fixture()
def deep(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A tree DEPTH folders deep with one video at the bottom (made and removed without recursion: os.makedirs
    and shutil.rmtree recurse in Python 3.11)."""
    root = tmp_path / "deep"
    root.mkdir()
    folders = []
    folder = root
    for _ in range(DEPTH):
        folder = folder / "d"
        folder.mkdir()
        folders.append(folder)
    video = folder / "bottom.mp4"
    video.write_bytes(os.urandom(2000))
    yield root, video
    remove_tree(root)


def remove_tree(root: Path) -> None:
    """``rm -r`` without recursion (shutil.rmtree recurses once per level in Python 3.11)."""
    folders, stack = [], [str(root)]
    while stack:
        top = stack.pop()
        folders.append(top)
        for entry in os.scandir(top):
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            else:
                os.unlink(entry.path)
    for folder in reversed(folders):
        os.rmdir(folder)


def test_display_path_escapes_what_cannot_be_shown_on_one_line() -> None:
    assert display_path("film 你好.mp4") == "film 你好.mp4"
    assert display_path("a\nb.mp4") == "'a\\nb.mp4'"
    assert display_path(f"{LATIN1}.mp4") == "'caf\\xe9.mp4'"
    assert display_path(b"x\\\xff") == "'x\\\\\\xff'"  # a backslash is escaped once escapes are used


def test_an_error_about_a_name_with_a_newline_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "two\nlines.mp4"
    path.write_text("not a video\n" * 20)
    with pytest.raises(InputError) as info:
        VideoSource(path)
    message = str(info.value)
    assert "\n" not in message and "two\\nlines.mp4'" in message and "not a video" in message


def test_a_symbolic_link_loop_is_reported_as_one(tmp_path: Path) -> None:
    loop = tmp_path / "loop.mp4"
    loop.symlink_to("loop.mp4")
    dangling = tmp_path / "gone.mp4"
    dangling.symlink_to("nowhere.mp4")
    assert sorted(p.name for p in iter_videos([tmp_path])) == ["gone.mp4", "loop.mp4"]
    with pytest.raises(InputError, match="symbolic link loop"):
        VideoSource(loop)
    with pytest.raises(InputError, match="broken symbolic link"):
        VideoSource(dangling)


def test_a_tree_1100_levels_deep_is_walked_without_recursion(deep: tuple[Path, Path], tmp_path: Path) -> None:
    root, video = deep
    assert list(iter_videos([root])) == [video]
    assert list(iter_videos([str(root / "**" / "*.mp4")])) == [video]  # glob's ``**`` recurses: walked instead
    fake = Fake()
    report = build_index(tmp_path / "deep.sqlite", [root], BuildOptions(extract=fake, engine="fake"))
    assert report.indexed == 1 and fake.calls == [str(video)]


def test_the_watcher_walks_a_deep_tree_and_does_not_start_recursive_file_events(
    deep: tuple[Path, Path], tmp_path: Path
) -> None:
    from vidocr.daemon.jobs import JobQueue
    from vidocr.daemon.watcher import Watcher

    root, video = deep
    queue = JobQueue(tmp_path / "q.jobs")
    try:
        watcher = Watcher([root], queue, settle_s=0.0)
        watcher.scan()
        assert watcher.poll() == 1 and list(queue.known()) == [str(video)]
        pytest.importorskip("watchdog")
        assert watcher._start_observer() is None  # watchdog's inotify walk recurses: rescans only
    finally:
        queue.close()


def test_watch_once_mirrors_a_deep_tree_into_its_output_folder(deep: tuple[Path, Path], tmp_path: Path,
                                                               samples: Path) -> None:
    root, video = deep
    shutil.copy(samples / "short_cue.mp4", video)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "vidocr", "watch", str(root), "--once", "--settle", "0.1", "-o", str(out),
         "--workers", "1", "-q", "--end", "2.2"],
        capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        srt = out.joinpath(*video.relative_to(root).parts[:-1], "bottom.srt")
        assert "第一句比较长一点" in srt.read_text(encoding="utf-8")
    finally:
        remove_tree(out)


def test_names_that_are_not_utf8_are_indexed_losslessly(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    video = lib / f"{LATIN1}.mp4"
    video.write_bytes(os.urandom(3000))
    (lib / f"{LATIN1}.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nsidecar words\n", encoding="utf-8")
    db = tmp_path / "index.sqlite"
    fake = Fake()
    report = build_index(db, [lib], BuildOptions(extract=fake, engine="fake", sidecars=True))
    assert (report.indexed, report.failed, report.sidecar_tracks) == (1, 0, 1)
    again = build_index(db, [lib], BuildOptions(extract=fake, engine="fake", sidecars=True))
    assert (again.unchanged, again.indexed, len(fake.calls)) == (1, 0, 1)  # the stored name is the same name
    conn = open_index(db, readonly=True)
    try:
        hits = search(conn, "hostile", SearchOptions()).hits + search(conn, "sidecar", SearchOptions()).hits
    finally:
        conn.close()
    assert [h.video for h in hits] == [str(video), str(video)]
    assert hits[1].sidecar == str(lib / f"{LATIN1}.srt")
    assert os.path.exists(hits[0].video)
    raw = sqlite3.connect(db)
    try:
        stored = raw.execute("SELECT CAST(path AS BLOB) FROM videos").fetchone()[0]
    finally:
        raw.close()
    assert stored == os.fsencode(video)  # the file name's own bytes


def test_extract_cli_handles_names_that_are_not_utf8_or_hold_a_newline(tmp_path: Path, samples: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(samples / "short_cue.mp4", folder / f"{LATIN1}.mp4")
    shutil.copy(samples / "short_cue.mp4", folder / "new\nline.mp4")
    (folder / f"bad {LATIN1}\n.mp4").write_text("garbage")
    out = tmp_path / "out"
    # A real process: its stderr escapes what it cannot encode, as a terminal's does (pytest's capture would not).
    proc = subprocess.run(
        [sys.executable, "-m", "vidocr", "extract", str(folder), "-o", str(out), "-f", "srt,vtt,json,ass",
         "--end", "2.2", "--workers", "1"],
        capture_output=True, timeout=300, cwd=Path(__file__).resolve().parent.parent,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 1 and "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "'" + str(folder) + "/bad caf\\xe9\\n.mp4'" in errors[0], err
    names = sorted(os.listdir(out))
    assert names == sorted(f"{stem}.{ext}" for stem in (LATIN1, "new\nline") for ext in ("srt", "vtt", "json", "ass"))
    assert "caf\\\\xe9.mp4" in (out / f"{LATIN1}.json").read_text(encoding="utf-8")


def test_extract_never_overwrites_its_own_input(tmp_path: Path, samples: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from vidocr._cli import main

    clip = tmp_path / "clip.srt"  # a video with a subtitle's name, given explicitly
    shutil.copy(samples / "short_cue.mp4", clip)
    film = tmp_path / "film.mp4"
    shutil.copy(samples / "short_cue.mp4", film)
    other = tmp_path / "film.srt"  # another input of the same run, where film.mp4's subtitles would go
    shutil.copy(samples / "short_cue.mp4", other)
    link = tmp_path / "same-folder"
    link.symlink_to(tmp_path)
    before = clip.read_bytes()
    assert main(["extract", str(clip), str(film), str(other), "-q"]) == 1
    err = capsys.readouterr().err
    assert f"{clip}: its srt output would overwrite itself" in err
    assert f"{film}: its srt output would overwrite the input {other}" in err
    assert clip.read_bytes() == before and other.read_bytes() == before
    # An output folder that is the input's folder through a link: the same file.
    assert main(["extract", str(clip), "-q", "-o", str(link)]) == 1
    assert "would overwrite itself" in capsys.readouterr().err and clip.read_bytes() == before


@pytest.mark.parametrize("stem", ["a" * 240, "长" * 80], ids=["ascii-240", "cjk-240-bytes"])
def test_long_names_are_written_and_leave_no_temp_file(tmp_path: Path, stem: str) -> None:
    from vidocr.atomic import write_texts_atomic
    from vidocr.daemon.worker import _remove_stale_temps

    # The final names fit in 255 bytes; their temp names (".<name>.XXXXXXXX.tmp") did not.
    targets = [tmp_path / f"{stem}.{ext}" for ext in ("srt", "json", "vtt", "ass")]
    assert all(len(os.fsencode(t.name)) <= 255 for t in targets)
    write_texts_atomic([(t, f"text of {t.suffix}") for t in targets])
    assert sorted(os.listdir(tmp_path)) == sorted(t.name for t in targets)
    assert (tmp_path / f"{stem}.json").read_text(encoding="utf-8") == "text of .json"
    # A temp file that a kill left behind is found by the daemon under its cut name.
    from vidocr.atomic import temp_name_part

    stale = tmp_path / f".{temp_name_part(stem + '.srt')}.abcd1234.tmp"
    stale.write_text("half")
    other = tmp_path / ".other.srt.abcd1234.tmp"
    other.write_text("not ours")
    _remove_stale_temps(tmp_path, stem)
    assert not stale.exists() and other.exists()
