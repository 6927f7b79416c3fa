"""What ``vidocr extract`` tells a person on stderr (issue #12): what runs before the first frame, a bar that reads
100% only when the video is done, result lines never glued to it, a file counter, ``-v``'s zones and stage times,
a summary table; stdout stays clean and ``-q`` says nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pysrt
import pytest

from vidocr._cli import main
from vidocr._cli.console import TABLE_ROWS, Console, FileProgress, summary_table
from vidocr.pipeline import Progress


class FakeTerminal(io.StringIO):
    """A stderr that says it is a terminal and keeps every byte written to it."""

    def isatty(self) -> bool:
        return True


def screen(raw: str) -> list[str]:
    """The lines a terminal shows after ``raw``: carriage return, erase to end of line, newline."""
    lines: list[str] = []
    line = ""
    col = 0
    i = 0
    while i < len(raw):
        if raw.startswith("\x1b[K", i):
            line = line[:col]
            i += 3
            continue
        ch = raw[i]
        if ch == "\r":
            col = 0
        elif ch == "\n":
            lines.append(line)
            line, col = "", 0
        else:
            line = line[:col] + ch + line[col + 1:]
            col += 1
        i += 1
    if line:
        lines.append(line)
    return lines


def statuses(raw: str) -> list[str]:
    """Every status line drawn, in order."""
    return [part.split("\x1b[K")[0] for part in raw.split("\r")[1:] if part and not part.startswith("\x1b[K")]


def on_terminal(monkeypatch: pytest.MonkeyPatch) -> FakeTerminal:
    """stderr as a terminal, from here on (called in the test: pytest's capture sets stderr anew when it starts)."""
    fake = FakeTerminal()
    monkeypatch.setattr("sys.stderr", fake)
    monkeypatch.setenv("COLUMNS", "120")
    return fake


def test_terminal_run_says_what_runs_counts_files_and_never_glues_lines(
        two_videos: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    terminal = on_terminal(monkeypatch)
    code = main(["extract", *two_videos, "-o", str(tmp_path / "out")])
    raw = terminal.getvalue()
    assert code == 0, raw
    assert capsys.readouterr().out == ""
    drawn = statuses(raw)
    for number, name in ((1, "short_cue.mp4"), (2, "repeat_gap.mp4")):
        mine = [s for s in drawn if s.startswith(f"[{number}/2] {name}")]
        # Before the first frame: what runs; then the bar, which reads 100% only once the video is done.
        assert any("finding subtitle zones" in s for s in mine), mine
        first_bar = next(i for i, s in enumerate(mine) if "%|" in s)
        assert any("finding subtitle zones" in s for s in mine[:first_bar])
        assert all("writing" in s for s in mine if "100%" in s), mine
        assert any("100%" in s for s in mine) and mine.index(next(s for s in mine if "100%" in s)) == len(mine) - 1
    shown = screen(raw)
    # What stays on the terminal: whole lines only, no bar left over or glued to a result line.
    assert not [line for line in shown if "%|" in line or "finding subtitle zones" in line], shown
    results = [line for line in shown if "cues ->" in line]
    assert [line.split(" ", 1)[0] for line in results] == ["[1/2]", "[2/2]"], shown
    assert results[0].startswith(f"[1/2] {two_videos[0]}: 5 cues -> ")
    # A short table, then the counts.
    header = shown.index(next(line for line in shown if line.startswith("file ")))
    assert shown[header].split() == ["file", "cues", "time", "status"]
    table = shown[header + 1:header + 3]
    assert [row.split()[-1] for row in table] == ["ok", "ok"] and two_videos[1] in table[1]
    assert shown[-1].startswith("vidocr: 2 file(s): 2 ok")


def test_piped_stderr_has_whole_lines_counter_and_table(two_videos: list[str], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    bad = Path(two_videos[0]).with_name("broken.mp4")
    bad.write_bytes(b"not a video at all")
    code = main(["extract", *two_videos, str(bad), "-o", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert "\r" not in err and "\x1b[" not in err and "finding subtitle zones" not in err  # no progress off a terminal
    lines = err.splitlines()
    assert [line.split(" ", 1)[0] for line in lines if "cues ->" in line] == ["[1/3]", "[2/3]"]
    assert len([line for line in lines if line.startswith("error: ") and "broken.mp4" in line]) == 1
    header = next(i for i, line in enumerate(lines) if line.split() == ["file", "cues", "time", "status"])
    rows = lines[header + 1:header + 4]
    assert [row.split()[-1] for row in rows] == ["ok", "ok", "failed"] and rows[2].split()[1] == "-"
    assert lines[-1].startswith("vidocr: 3 file(s): 2 ok, 0 without subtitles, 1 failed")


def test_stdout_carries_only_the_subtitles_and_verbose_reports_zones_and_stage_times(
        samples: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    terminal = on_terminal(monkeypatch)
    code = main(["extract", str(samples / "short_cue.mp4"), "-o", "-", "-v"])
    out = capsys.readouterr().out
    raw = terminal.getvalue()
    assert code == 0, raw
    subs = pysrt.from_string(out)
    assert len(subs) == 5 and "\x1b" not in out and "\r" not in out and "zones" not in out
    shown = screen(raw)
    zones = [line for line in shown if ": zones: " in line]
    assert len(zones) == 1 and "bottom" in zones[0]
    times = [line for line in shown if ": times: " in line]
    assert len(times) == 1
    for stage in ("zones", "decode", "detect", "OCR", "merge", "write", "wall"):
        assert f"{stage} " in times[0], times
    assert not [line for line in shown if line.startswith("file ")]  # one file: no table


def test_json_summary_alone_on_stdout_and_quiet_says_nothing(two_videos: list[str], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    terminal = on_terminal(monkeypatch)
    code = main(["extract", *two_videos, "-o", str(tmp_path / "a"), "--json", "-q"])
    out = capsys.readouterr().out
    assert code == 0 and json.loads(out)["counts"]["ok"] == 2
    assert terminal.getvalue() == ""
    code = main(["extract", two_videos[0], "-o", str(tmp_path / "b"), "-q", "-v"])
    assert code == 0 and terminal.getvalue() == "" and capsys.readouterr().out == ""


def test_console_lines_from_other_writers_clear_the_bar_first() -> None:
    term = FakeTerminal()
    console = Console(term)
    console.status("film.mkv:  40%|####      | 4/10 s")
    console.write("vidocr: loading model hunyuan-vllm (2 s)")  # print() writes the text, then the newline
    console.write("\n")
    console.line("film.mkv: 3 cues -> film.srt")
    assert screen(term.getvalue()) == ["vidocr: loading model hunyuan-vllm (2 s)", "film.mkv: 3 cues -> film.srt",
                                       "film.mkv:  40%|####      | 4/10 s"]
    console.clear()
    assert screen(term.getvalue())[-1] == "film.mkv: 3 cues -> film.srt"
    quiet = Console(FakeTerminal(), quiet=True)
    quiet.status("x")
    quiet.line("not shown")
    quiet.line("error: shown", always=True)
    assert quiet.stream.getvalue() == "error: shown\n"  # type: ignore[attr-defined]


def test_the_bar_stays_below_100_until_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    term = FakeTerminal()
    bar = FileProgress(Console(term), "[3/12] film.mkv")
    bar(Progress("film.mkv", 0.0, 60.0, 0, 0, 0, "zones"))
    bar(Progress("film.mkv", 60.0, 60.0, 1500, 20, 9, "decode"))  # the last frame is decoded; OCR goes on
    bar(Progress("film.mkv", 60.0, 60.0, 1500, 20, 9, "finish"))
    bar(Progress("film.mkv", 60.04, 60.0, 1500, 20, 12, "done"))
    drawn = statuses(term.getvalue())
    assert drawn[0] == "[3/12] film.mkv: opening…" and drawn[1] == "[3/12] film.mkv: finding subtitle zones…"
    assert " 99%|" in drawn[2] and "9 cues" in drawn[2]
    assert " 99%|" in drawn[3] and "reading the last subtitles" in drawn[3]
    assert "100%|" in drawn[4] and "12 cues" in drawn[4]
    assert all(len(s) <= 99 for s in drawn)


def test_summary_table_of_many_files_keeps_what_went_wrong() -> None:
    rows = [SimpleNamespace(path=f"/lib/ep{i:03d}.mkv", status="ok", cues=10, seconds=1.0) for i in range(60)]
    rows[7] = SimpleNamespace(path="/lib/ep007.mkv", status="failed", cues=0, seconds=0.1)
    rows[9] = SimpleNamespace(path="/lib/" + "很长的名字" * 20 + ".mkv", status="empty", cues=0, seconds=2.0)
    table = summary_table(rows, 80)
    assert len(rows) > TABLE_ROWS and len(table) == 4
    assert table[1].startswith("/lib/ep007.mkv") and table[1].endswith("failed")
    assert table[2].startswith("…") and table[2].endswith("no subtitles") and ".mkv" in table[2]
    assert table[3] == "… and 58 more ok"
