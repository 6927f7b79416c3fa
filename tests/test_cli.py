"""The CLI in-process (main([...]) -> exit code) and once as a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pysrt
import pytest
from support.synth import read_srt

from vidocr._cli import main
from vidocr._cli.options import parse_time


@pytest.fixture()
def library(tmp_path: Path, samples: Path) -> Path:
    root = tmp_path / "lib"
    (root / "season 1").mkdir(parents=True)
    shutil.copy(samples / "short_cue.mp4", root / "season 1" / "ep01.mp4")
    shutil.copy(samples / "repeat_gap.mp4", root / "ep02.mp4")
    (root / "notes.txt").write_text("not a video")
    (root / ".hidden.mp4").write_bytes(b"")
    (root / "ep03.mp4.part").write_bytes(b"partial")
    return root


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_extract_folder_recursively_with_several_formats(library: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out_dir = tmp_path / "out"
    code, out, err = run_cli(["extract", str(library), "-o", str(out_dir), "-f", "srt,vtt,json", "--json"], capsys)
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "ep01.json", "ep01.srt", "ep01.vtt", "ep02.json", "ep02.srt", "ep02.vtt",
    ]
    summary = json.loads(out)
    assert summary["counts"] == {"ok": 2, "empty": 0, "failed": 0, "skipped": 0}
    got = pysrt.open(str(out_dir / "ep02.srt"))
    truth = read_srt(Path(__file__).parent.parent / "samples" / "repeat_gap.srt")
    assert [(i.start.ordinal, i.end.ordinal, i.text) for i in got] == [(t.start_ms, t.end_ms, t.text) for t in truth]
    assert "2 file(s): 2 ok" in err


def test_outputs_default_beside_the_video_and_glob(library: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli(["extract", str(library / "*.mp4"), "-q"], capsys)
    assert code == 0, err
    assert (library / "ep02.srt").exists() and not (library / "season 1" / "ep01.srt").exists()


def test_one_bad_file_does_not_stop_the_batch(library: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = library / "broken.mp4"
    bad.write_text("garbage")
    out_dir = tmp_path / "out"
    code, _, err = run_cli(["extract", str(bad), str(library / "ep02.mp4"), "-o", str(out_dir)], capsys)
    assert code == 1
    assert (out_dir / "ep02.srt").exists() and not (out_dir / "broken.srt").exists()
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {bad}: not a video file (unrecognised or truncated data)"]
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "name, content, expect",
    [("missing.mp4", None, "file not found"), ("zero.mp4", b"", "empty"), ("text.mp4", b"hi", "not a video")],
)
def test_bad_input_one_line_nonzero_no_output(tmp_path: Path, capsys, name: str, content: bytes | None,  # type: ignore[no-untyped-def]
                                              expect: str) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    out_dir = tmp_path / "out"
    code, _, err = run_cli(["extract", str(path), "-o", str(out_dir), "-q"], capsys)
    assert code != 0
    assert err.strip().count("\n") == 0 and expect in err and str(path) in err
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_folder_without_videos_and_bad_options(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a.txt").write_text("x")
    code, _, err = run_cli(["extract", str(tmp_path)], capsys)
    assert code == 2 and "no video files found" in err
    code, _, err = run_cli(["extract", str(tmp_path), "-f", "docx"], capsys)
    assert code == 2 and "unknown output format" in err
    code, _, err = run_cli(["extract", str(tmp_path), "--engine", "nope"], capsys)
    assert code == 2 and "unknown engine" in err


def test_cpu_engine_cannot_translate(samples: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli(["extract", str(samples / "zh.mp4"), "--translate", "en"], capsys)
    assert code == 2
    assert "cannot do task 'translate'" in err and "hunyuan-vllm" in err


def test_unwritable_output_dir_fails_cleanly(samples: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file"
    blocker.write_text("a file where a folder should be")
    code, _, err = run_cli(["extract", str(samples / "short_cue.mp4"), "-o", str(blocker / "sub"), "-q"], capsys)
    # Found before any video is decoded: exit 3 (output), one line.
    assert code == 3 and "cannot create the output folder" in err and "Traceback" not in err
    assert err.strip().count("\n") == 0


def test_existing_output_untouched_when_extraction_fails(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    video = tmp_path / "film.mp4"
    video.write_bytes(b"\x00" * 1000)
    (tmp_path / "film.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nkeep me\n")
    code, _, _ = run_cli(["extract", str(video), "-q"], capsys)
    assert code == 1
    assert "keep me" in (tmp_path / "film.srt").read_text()


def test_no_subtitles_found_names_the_region(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from support.synth import SynthSpec, render_video

    video = tmp_path / "nosubs.mp4"
    render_video(SynthSpec(width=640, height=360, duration=2.0, background="dark"), video)
    code, out, err = run_cli(["extract", str(video), "--json"], capsys)
    assert code == 0
    assert "no subtitles found in region x,y,w,h=" in err and "no file written" in err
    doc = json.loads(out)
    assert doc["counts"]["empty"] == 1
    # The run's stats are an object a program can read, as in the JSON output file (not a Python repr).
    stats = doc["files"][0]["stats"]
    assert isinstance(stats, dict) and stats["frames"] > 0 and len(stats["band"]) == 4
    assert not (tmp_path / "nosubs.srt").exists()


def test_config_file_supplies_options_and_cli_wins(samples: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "vidocr.yaml"
    config.write_text(f"extract:\n  format: [srt, json]\n  output-dir: {tmp_path / 'from-config'}\n  start: '0:02'\n")
    code, _, err = run_cli(["extract", str(samples / "short_cue.mp4"), "--config", str(config), "-q"], capsys)
    assert code == 0, err
    made = sorted(p.name for p in (tmp_path / "from-config").iterdir())
    assert made == ["short_cue.json", "short_cue.srt"]
    first = pysrt.open(str(tmp_path / "from-config" / "short_cue.srt"))[0]
    assert first.start.ordinal >= 2000  # start: 0:02 applied
    code, _, err = run_cli(["extract", str(samples / "short_cue.mp4"), "--config", str(config), "-f", "vtt",
                            "-o", str(tmp_path / "cli"), "-q"], capsys)
    assert code == 0 and [p.name for p in (tmp_path / "cli").iterdir()] == ["short_cue.vtt"]
    config.write_text("extract:\n  bogus-option: 1\n")
    code, _, err = run_cli(["extract", str(samples / "short_cue.mp4"), "--config", str(config)], capsys)
    assert code == 2 and "unknown option(s) in config: bogus_option" in err


def test_parse_time() -> None:
    assert parse_time("12.5") == 12.5
    assert parse_time("1:02.5") == 62.5
    assert parse_time("01:00:03.250") == 3603.25
    with pytest.raises(Exception, match="bad time"):
        parse_time("1:x")


def test_real_subprocess_run(samples: Path, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.run(
        [sys.executable, "-m", "vidocr", "extract", str(samples / "short_cue.mp4"), "-o", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "short_cue.srt").exists()
    assert "1 file(s): 1 ok" in proc.stderr
    # Piped (not a TTY): no progress bar escape codes.
    assert "\r" not in proc.stderr and "\x1b[" not in proc.stderr


def test_same_stem_videos_never_overwrite_each_other(tmp_path: Path, samples: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from vidocr.files import output_stem
    from vidocr.index.sidecars import find_sidecars

    # a.mp4 and a.mkv side by side: each gets outputs named after its whole name.
    twins = tmp_path / "twins"
    twins.mkdir()
    shutil.copy(samples / "short_cue.mp4", twins / "a.mp4")
    shutil.copy(samples / "repeat_gap.mp4", twins / "a.mkv")
    shutil.copy(samples / "zh.mp4", twins / "b.mp4")
    assert [output_stem(twins / n) for n in ("a.mp4", "a.mkv", "b.mp4")] == ["a.mp4", "a.mkv", "b"]
    code, _, err = run_cli(["extract", str(twins), "-q"], capsys)
    assert code == 0, err
    assert sorted(p.name for p in twins.glob("*.srt")) == ["a.mkv.srt", "a.mp4.srt", "b.srt"]
    assert [c.text for c in read_srt(twins / "a.mkv.srt")] == [c.text for c in read_srt(samples / "repeat_gap.srt")]
    assert [c.text for c in read_srt(twins / "a.mp4.srt")] == [c.text for c in read_srt(samples / "short_cue.srt")]
    names = [p.name for p in twins.iterdir()]
    assert [s.path.name for s in find_sidecars(twins / "a.mp4", names)] == ["a.mp4.srt"]
    assert [s.path.name for s in find_sidecars(twins / "b.mp4", names)] == ["b.srt"]
    # The same name in two folders with one -o: the second is refused, the first's output stands.
    for sub, sample in (("x", "short_cue.mp4"), ("y", "repeat_gap.mp4")):
        (tmp_path / sub).mkdir()
        shutil.copy(samples / sample, tmp_path / sub / "ep.mp4")
    out = tmp_path / "out"
    code, _, err = run_cli(["extract", str(tmp_path / "x"), str(tmp_path / "y"), "-o", str(out), "-q"], capsys)
    assert code != 0
    assert "would overwrite" in err and str(tmp_path / "y" / "ep.mp4") in err
    assert [c.text for c in read_srt(out / "ep.srt")] == [c.text for c in read_srt(samples / "short_cue.srt")]


def test_an_internal_error_on_one_video_does_not_stop_the_batch(  # type: ignore[no-untyped-def]
    library: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    import vidocr.pipeline

    real_extract = vidocr.pipeline.extract

    def flaky(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(path).name == "ep01.mp4":
            raise RuntimeError("a bug")
        return real_extract(path, *args, **kwargs)

    monkeypatch.setattr(vidocr.pipeline, "extract", flaky)
    out_dir = tmp_path / "out"
    code, _, err = run_cli(["extract", str(library / "season 1" / "ep01.mp4"), str(library / "ep02.mp4"),
                            "-o", str(out_dir)], capsys)
    assert code == 1
    assert (out_dir / "ep02.srt").exists() and not (out_dir / "ep01.srt").exists()
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "internal error: RuntimeError: a bug" in errors[0]
    assert "Traceback" not in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_json_to_a_full_stdout_is_one_line(samples: Path, tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "vidocr", "extract", str(samples / "demo.mp4"), "-o",
                               str(tmp_path), "--json", "-q"], stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=300)
    assert proc.returncode == 3
    assert proc.stderr.strip() == "error: cannot write to standard output: No space left on device"
