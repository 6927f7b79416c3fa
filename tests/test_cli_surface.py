"""What a user touches first (issue #12): options checked before any work, one output-path rule, one exit-code
table, config files read defensively, one option layer for every command that extracts, the default index."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pysrt
import pytest
from support.synth import read_srt

from vidocr._cli import build_parser, main
from vidocr._cli.errors import EXIT_CODES
from vidocr._cli.options import extract_options_from_args

ROOT = Path(__file__).resolve().parent.parent


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


# --- options checked once, before any work ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, expect",
    [
        (["--roi", "0,0,0,40"], "--roi"),
        (["--roi", "0,0,1e300,40"], "--roi"),
        (["--roi", "nan,0,100,40"], "--roi"),
        (["--roi", "0,0,100"], "--roi"),
        (["--roi", "0.0,0.8,0.0,0.2"], "--roi"),
        (["--zones", "middle"], "--zones"),
        (["--zones", "0,0,inf,40;1,2,3,4"], "--zones"),
        (["--translate", "en"], "cannot do task 'translate'"),
        (["--translate", "../../etc"], "--translate"),
        (["--start", "nan"], "bad time"),
        (["--start", "inf"], "bad time"),
        (["--end", "1e300"], "bad time"),
        (["--start", "5", "--end", "5"], "--end"),
        (["--start", "1:00", "--end", "0:30"], "--end"),
        (["--sample-fps", "0"], "--sample-fps"),
        (["--sample-fps", "-5"], "--sample-fps"),
        (["--sample-fps", "1e-9"], "--sample-fps"),
        (["--sample-fps", "nan"], "--sample-fps"),
        (["--recheck", "inf"], "--recheck"),
        (["--fuse", "-1"], "--fuse"),
        (["--fuse", "nan"], "--fuse"),
        (["--workers", "-2"], "--workers"),
        (["--bilingual"], "needs --translate"),
        (["-f", "srt", "-f", "docx"], "unknown output format"),
        (["--engine-opt", "novalue"], "KEY=VALUE"),
        (["--engine", "hunyuan-transformers", "--profile", "nope"], "profile"),
        (["--engine-opt", "retires=2"], "engine 'rapidocr' has no setting 'retires'; valid keys: ppocr"),
        (["--engine", "openai", "--engine-opt", "retires=2"], "valid keys: api_key, backoff,"),
        (["--engine", "openai", "--engine-opt", "retries=many"], "retries: expected an integer, got 'many'"),
    ],
)
def test_bad_values_are_one_line_exit_2_before_any_video(two_videos: list[str], tmp_path: Path, capsys,  # type: ignore[no-untyped-def]
                                                         options: list[str], expect: str) -> None:
    out = tmp_path / "out"
    code, _, err = run_cli(["extract", *two_videos, "-o", str(out), *options], capsys)
    assert code == 2, err
    assert len(error_lines(err)) == 1 and expect in err, err  # once, not once per video
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert not out.exists()


def test_an_existing_file_as_output_folder_is_refused_before_decoding(two_videos: list[str], tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                      capsys) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    code, _, err = run_cli(["extract", *two_videos, "-o", str(target)], capsys)
    assert code == 2 and "is a file, not a folder" in err and "cues ->" not in err
    subtitle = tmp_path / "film.srt"
    subtitle.write_text("mine")
    code, _, err = run_cli(["extract", *two_videos, "-o", str(subtitle)], capsys)
    assert code == 2 and "2 videos" in err and "cues ->" not in err
    assert target.read_text() == "mine" and subtitle.read_text() == "mine"


def test_options_that_fit_no_video_are_a_usage_error(samples: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli(["extract", str(samples / "short_cue.mp4"), "-o", str(tmp_path), "--start", "500"], capsys)
    assert code == 2 and len(error_lines(err)) == 1 and "after the end of the video" in err
    code, _, err = run_cli(["extract", str(samples / "short_cue.mp4"), "-o", str(tmp_path), "--roi",
                            "5000,5000,100,100"], capsys)
    assert code == 2 and len(error_lines(err)) == 1 and "--roi" in err


# --- output paths ---------------------------------------------------------------------------------------------


def test_one_video_to_a_named_file_to_stdout_and_formats_accumulate(samples: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    video = str(samples / "short_cue.mp4")
    truth = [(c.start_ms, c.end_ms, c.text) for c in read_srt(samples / "short_cue.srt")]
    code, _, err = run_cli(["extract", video, "-o", str(tmp_path / "film.srt"), "-q"], capsys)
    assert code == 0, err
    assert (tmp_path / "film.srt").is_file() and sorted(p.name for p in tmp_path.iterdir()) == ["film.srt"]
    assert [(i.start.ordinal, i.end.ordinal, i.text) for i in pysrt.open(str(tmp_path / "film.srt"))] == truth
    code, out, err = run_cli(["extract", video, "-o", "-", "-q"], capsys)
    assert code == 0, err
    assert [(i.start.ordinal, i.end.ordinal, i.text) for i in pysrt.from_string(out)] == truth
    code, out, _ = run_cli(["extract", video, "-o", "-", "-f", "vtt", "-q"], capsys)
    assert code == 0 and out.startswith("WEBVTT")
    code, _, err = run_cli(["extract", video, "-o", "-", "-f", "srt", "-f", "vtt"], capsys)
    assert code == 2 and "one format" in err
    code, _, err = run_cli(["extract", video, "-o", "-", "--json"], capsys)
    assert code == 2 and "--json" in err
    code, _, err = run_cli(["extract", video, "-o", str(tmp_path / "film.srt"), "-f", "vtt"], capsys)
    assert code == 2 and ".srt file" in err
    both = tmp_path / "both"
    code, _, err = run_cli(["extract", video, "-o", str(both), "-f", "srt", "-f", "vtt", "-q"], capsys)
    assert code == 0, err
    assert sorted(p.name for p in both.iterdir()) == ["short_cue.srt", "short_cue.vtt"]


def test_config_format_is_replaced_by_the_command_line(samples: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "c.yaml"
    config.write_text("extract:\n  format: [srt, json]\n  server: http://a\n")
    parser = build_parser()
    from vidocr._cli.config import apply_config

    argv = ["extract", "x.mp4", "--config", str(config)]
    apply_config(parser, argv, "extract")
    assert parser.parse_args(argv).format == ["srt", "json"]
    parser = build_parser()
    apply_config(parser, [*argv, "-f", "vtt", "-f", "ass"], "extract")
    args = parser.parse_args([*argv, "-f", "vtt", "-f", "ass", "--server", "http://b"])
    assert args.format == ["vtt", "ass"] and args.server == ["http://b"]


# --- config files ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expect",
    [
        ("extract:\n  format: 42\n", "format: expected text"),
        ("extract:\n  workers: [1, 2]\n", "workers: expected an integer"),
        ("extract:\n  roi: 5\n", "roi: expected text"),
        ("extract:\n  output-dir: 12\n", "output-dir: expected text"),
        ("extract:\n  keep-static: 'yes'\n", "keep-static: expected true or false"),
        ("extract:\n  task: poem\n", "task: expected one of"),
        ("extract:\n  sample-fps: .nan\n", "--sample-fps must be"),
        ("extract: [1, 2]\n", "section extract"),
        ("- a\n- b\n", "must be a mapping"),
        ("bogus: 1\n", "unknown option(s) in config: bogus"),
        ("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
         "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nextract:\n  server: *c\n", "aliases"),
        ("extract:\n  format: srt\n" + "#" * (1 << 20), "larger than 1024 KiB"),
        ("extract: {format: [srt\n", "invalid YAML"),
    ],
)
def test_bad_config_files_are_one_line_exit_2(samples: Path, tmp_path: Path, capsys, text: str,  # type: ignore[no-untyped-def]
                                              expect: str) -> None:
    config = tmp_path / "vidocr.yaml"
    config.write_text(text)
    code, _, err = run_cli(["extract", str(samples / "short_cue.mp4"), "--config", str(config), "-o",
                            str(tmp_path / "out")], capsys)
    assert code == 2, err
    assert len(error_lines(err)) == 1 and expect in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


def test_shipped_configs_load_for_their_commands(tmp_path: Path) -> None:
    from vidocr._cli.config import apply_config

    for argv in (["extract", "x.mp4"], ["index", "build", "lib"], ["index", "status"], ["search", "q"],
                 ["watch"], ["jobs"]):
        for config in ("default.yaml", "watch.yaml"):
            parser = build_parser()
            full = [*argv, "--config", str(ROOT / "configs" / config)]
            apply_config(parser, full, argv[0])
            parser.parse_args(full)


# --- one option layer -----------------------------------------------------------------------------------------


def _dests(argv: list[str]) -> set[str]:
    from vidocr._cli.config import leaf_parser

    parser, _ = leaf_parser(build_parser(), argv)
    return {a.dest for a in parser._actions}


def test_every_command_that_extracts_takes_every_extract_option() -> None:
    import argparse

    from vidocr._cli.options import add_extract_options

    extraction = argparse.ArgumentParser()
    add_extract_options(extraction, outputs=False)
    with_outputs = argparse.ArgumentParser()
    add_extract_options(with_outputs)
    wanted = {a.dest for a in extraction._actions} - {"help"}
    assert {"zones", "roi", "start", "end", "sample_fps", "keep_static", "engine", "translate"} <= wanted
    assert wanted <= _dests(["index", "build"])
    assert {a.dest for a in with_outputs._actions} <= _dests(["extract"])
    assert {a.dest for a in with_outputs._actions} <= _dests(["watch"])
    assert {"verbose", "config"} <= _dests(["index", "build"]) & _dests(["watch"]) & _dests(["extract"])
    argv = ["--zones", "top,bottom", "--roi", "0,600,1280,120", "--start", "1:00", "--end", "90", "--sample-fps",
            "10", "--keep-static", "--recheck", "3", "--no-scene-cuts", "--workers", "2", "--fuse", "0.5",
            "--no-polish"]
    parsed = [extract_options_from_args(build_parser().parse_args(cmd)) for cmd in (
        ["extract", "v.mp4", *argv], ["index", "build", "lib", *argv], ["watch", "dir", *argv])]
    assert parsed[0] == parsed[1] == parsed[2]
    assert parsed[0].start == 60 and parsed[0].end == 90 and parsed[0].detect.sample_fps == 10
    assert parsed[0].keep_static and parsed[0].zones == "top,bottom" and parsed[0].engine_options.workers == 2
    assert parsed[0].fuse_s == 0.5 and not parsed[0].polish
    assert extract_options_from_args(build_parser().parse_args(["extract", "v.mp4"])).polish


def test_the_cli_is_a_front_end_that_the_library_never_imports() -> None:
    """The CLI lives in the private ``vidocr._cli`` package: no library module imports it (``python -m vidocr``
    aside), and no command module imports another (they share options, config, errors and console only)."""
    import ast

    from vidocr._cli import COMMANDS

    commands = {command.NAME for command in COMMANDS}
    assert {"extract", "index", "search", "watch", "jobs"} <= commands

    def imported(path: Path) -> set[str]:
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        return names

    package = ROOT / "vidocr"
    for path in package.rglob("*.py"):
        names = imported(path)
        if path.parent.name != "_cli":
            if path != package / "__main__.py":
                assert not {n for n in names if n.startswith("vidocr._cli")}, path
        elif path.stem in commands:
            others = {f"vidocr._cli.{name}" for name in commands - {path.stem}}
            assert not names & others, path


def test_the_api_key_comes_from_the_environment_through_the_cli_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from vidocr.engines import EngineOptions, create_engine

    monkeypatch.setenv("VIDOCR_API_KEY", "sekret")
    monkeypatch.setenv("OTHER_KEY", "other")
    engine = create_engine("openai", EngineOptions(extra={"base_urls": "http://127.0.0.1:9", "served_model_name": "m"}))
    assert engine._key is None  # type: ignore[attr-defined]  # the library reads no environment
    engine.close()
    options = extract_options_from_args(build_parser().parse_args(["extract", "v.mp4", "--engine", "openai"]))
    assert options.engine_options.extra["api_key"] == "sekret"
    argv = ["extract", "v.mp4", "--engine", "openai", "--engine-opt", "api_key_env=OTHER_KEY"]
    assert extract_options_from_args(build_parser().parse_args(argv)).engine_options.extra == {"api_key": "other"}
    argv = ["extract", "v.mp4", "--engine", "openai", "--engine-opt", "api_key=given", "--engine-opt", "retries=3"]
    extra = extract_options_from_args(build_parser().parse_args(argv)).engine_options.extra
    assert extra == {"api_key": "given", "retries": 3}
    rapid = extract_options_from_args(build_parser().parse_args(["extract", "v.mp4"]))
    assert rapid.engine_options.extra == {}


def test_index_build_and_search_take_config_and_extract_options(samples: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(samples / "short_cue.mp4", lib / "a.mp4")
    db = tmp_path / "lib.sqlite"
    config = tmp_path / "c.yaml"
    config.write_text(f"db: {db}\nindex:\n  zones: bottom\n  start: 2\n  lang: en\nsearch:\n  limit: 1\n")
    code, _, err = run_cli(["index", "build", str(lib), "--config", str(config), "-q", "--sample-fps", "25"], capsys)
    assert code == 0, err
    truth = read_srt(samples / "short_cue.srt")
    later = [c for c in truth if c.start_ms >= 2000]
    assert later and len(later) < len(truth)
    word = later[0].text.split()[0]
    code, out, err = run_cli(["search", word, "--config", str(config)], capsys)
    assert code == 0 and len([line for line in out.splitlines() if line.startswith(str(lib))]) == 1, (out, err)
    earlier = [c for c in truth if c.end_ms <= 2000 and c.text not in {x.text for x in later}]
    if earlier:  # --start 2 from the config: the first cues are not indexed
        code, out, _ = run_cli(["search", earlier[0].text.split()[0], "--config", str(config)], capsys)
        assert out == ""
    code, out, err = run_cli(["index", "status", "--config", str(config)], capsys)
    assert code == 0 and "1 videos" in out


# --- the default index, search hints ----------------------------------------------------------------------------


def test_default_index_location_env_and_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from vidocr.config import default_db_path

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_db_path() == tmp_path / "data" / "vidocr" / "library.sqlite"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    assert default_db_path() == Path("~/.local/share/vidocr/library.sqlite").expanduser()
    monkeypatch.setenv("VIDOCR_DB", str(tmp_path / "lib.sqlite"))
    assert default_db_path() == tmp_path / "lib.sqlite"


def test_commands_share_the_default_index(samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                          capsys) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    db = tmp_path / "data" / "vidocr" / "library.sqlite"
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(samples / "short_cue.mp4", lib / "a.mp4")
    code, _, err = run_cli(["index", "build", str(lib), "-q"], capsys)
    assert code == 0 and db.is_file(), err
    word = read_srt(samples / "short_cue.srt")[0].text.split()[0]
    code, out, _ = run_cli(["search", word], capsys)
    assert code == 0 and str(lib / "a.mp4") in out
    # A query that begins with "-" is the query (after "--" too); -word excludes, so -words alone are one line.
    code, out, err = run_cli(["search", "--", "-zzqx"], capsys)
    assert code == 2 and out == "" and "only exclude" in err and err.count("\n") == 1
    code, out, _ = run_cli(["search", word, "OR", "zzz"], capsys)
    assert code == 0 and str(lib / "a.mp4") in out
    code, out, err = run_cli(["search", word, "--lang", "en"], capsys)
    assert code == 0 and out == "" and "no track has a language" in err and "--lang" in err
    code, _, err = run_cli(["watch", str(lib), "--once", "--settle", "0", "-q"], capsys)
    assert code == 0, err
    assert Path(f"{db}.jobs").is_file()
    code, out, _ = run_cli(["jobs"], capsys)
    assert code == 0 and str(lib / "a.mp4") in out


# --- batch exit codes -----------------------------------------------------------------------------------------


def test_batch_commands_exit_1_when_an_item_failed(samples: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(samples / "short_cue.mp4", lib / "good.mp4")
    (lib / "bad.mp4").write_bytes(b"not a video at all")
    db = str(tmp_path / "i.sqlite")
    code, out, err = run_cli(["extract", str(lib), "-o", str(tmp_path / "out"), "-q"], capsys)
    assert code == 1 and (tmp_path / "out" / "good.srt").is_file()
    code, out, err = run_cli(["index", "build", str(lib), "--db", db, "-q"], capsys)
    assert code == 1 and "failed: " in out, (out, err)
    code, out, err = run_cli(["index", "build", str(lib), "--db", db, "-q", "--json"], capsys)
    assert code == 0  # nothing changed, nothing failed in this build (the earlier failure is not retried)
    code, _, err = run_cli(["watch", str(lib), "--db", str(tmp_path / "w.sqlite"), "--once", "--settle", "0",
                            "-q", "-o", str(tmp_path / "wout")], capsys)
    assert code == 1 and "bad.mp4" in err
    assert (tmp_path / "wout" / "good.srt").is_file()


# --- help -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [[], ["extract"], ["index"], ["index", "build"], ["index", "status"], ["search"],
                                  ["watch"], ["jobs"]])
def test_every_help_has_the_exit_code_table(argv: list[str], capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out
    for code, text in EXIT_CODES:
        assert f"{code:>3}  {text}" in out
    assert "processes" not in out


def test_extract_help_names_engines_default_format_and_examples(capsys) -> None:  # type: ignore[no-untyped-def]
    from vidocr.engines import engine_names

    with pytest.raises(SystemExit):
        main(["extract", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for name in engine_names():
        assert name in out
    assert "srt (default)" in out and "examples:" in out and "vidocr extract film.mkv -o -" in out


def test_readme_documents_the_exit_code_table() -> None:
    """The README's table is the CLI's, row for row, and that holds every exit code of the library's error table."""
    from vidocr.errors import ERROR_TABLE, EXIT_MEANINGS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    assert rows == [f"| {code} | {text} |" for code, text in EXIT_CODES]
    codes = dict(EXIT_CODES)
    for code, text in EXIT_MEANINGS.items():
        assert codes[code] == text
    assert {handling.exit_code for _, handling in ERROR_TABLE} <= set(codes)


# --- one real subprocess: exit codes and file modes --------------------------------------------------------------


def test_subprocess_exit_codes_and_file_modes(samples: Path, tmp_path: Path) -> None:
    def vidocr(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "vidocr", *args], capture_output=True, text=True,
                              timeout=300, umask=0o022)

    out = tmp_path / "out"
    out.mkdir()
    (out / "repeat_gap.srt").write_text("old")
    (out / "repeat_gap.srt").chmod(0o640)
    proc = vidocr("extract", str(samples / "short_cue.mp4"), str(samples / "repeat_gap.mp4"), "-o", str(out),
                  "-f", "srt", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
    assert modes == {"short_cue.srt": 0o644, "short_cue.json": 0o644, "repeat_gap.srt": 0o640,
                     "repeat_gap.json": 0o644}
    assert vidocr("extract", str(samples / "short_cue.mp4"), "--roi", "0,0,0,0").returncode == 2
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"garbage")
    proc = vidocr("extract", str(bad), str(samples / "short_cue.mp4"), "-o", str(tmp_path / "o2"))
    assert proc.returncode == 1 and os.path.isfile(tmp_path / "o2" / "short_cue.srt")
    proc = vidocr("extract", str(samples / "short_cue.mp4"), "-o", str(bad / "sub"))
    assert proc.returncode == 3 and proc.stderr.count("error:") == 1
    proc = vidocr("search", "x", "--db", str(tmp_path / "none.sqlite"))
    assert proc.returncode == 5
