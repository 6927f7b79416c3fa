"""One error table (issue 14): every error class has one exit code, kind and retry rule, used by the CLI, the
index builder and the daemon; an error about an option names the parameter, and the CLI names its flag."""

from __future__ import annotations

import pickle
import sqlite3

import pytest

from vidocr._cli import main
from vidocr._cli.errors import describe, flag
from vidocr.errors import (
    ERROR_TABLE,
    INTERNAL_ERROR,
    ConfigError,
    DecodeError,
    EngineError,
    EngineUnavailable,
    IndexError_,
    InputError,
    OutputError,
    VidocrError,
    classify,
)


@pytest.mark.parametrize(
    "err, kind, exit_code, permanent, stops_batch",
    [
        (InputError("x"), "input", 2, True, False),
        (DecodeError("x"), "input", 2, True, False),
        (ConfigError("x"), "config", 2, True, True),
        (EngineError("x"), "engine", 4, False, True),
        (EngineUnavailable("x"), "engine", 4, False, True),
        (OutputError("x"), "output", 3, False, False),
        (IndexError_("x"), "index", 5, False, False),
        (sqlite3.OperationalError("disk I/O error"), "index", 5, False, False),
        (VidocrError("no video frames"), "input", 1, True, False),
        (PermissionError(13, "denied"), "io", 1, False, False),
        (ZeroDivisionError(), "internal", 1, False, False),
    ],
)
def test_every_error_class_is_handled_one_way(err: BaseException, kind: str, exit_code: int, permanent: bool,
                                              stops_batch: bool) -> None:
    handling = classify(err)
    assert (handling.kind, handling.exit_code, handling.permanent, handling.stops_batch) == (
        kind, exit_code, permanent, stops_batch)
    if isinstance(err, VidocrError):
        assert err.exit_code == exit_code
    assert (handling is INTERNAL_ERROR) == (kind == "internal")


def test_the_table_lists_subclasses_before_their_bases() -> None:
    classes = [cls for cls, _ in ERROR_TABLE]
    for i, cls in enumerate(classes):
        assert not any(issubclass(later, cls) for later in classes[i + 1:]), cls


def test_an_option_error_names_the_parameter_and_the_cli_its_flag() -> None:
    err = ConfigError("{param} must be from 0.1 to 1000, got 0", "film.mkv", param="sample_fps")
    assert err.reason == "sample_fps must be from 0.1 to 1000, got 0"
    assert str(err) == "film.mkv: sample_fps must be from 0.1 to 1000, got 0"
    assert describe(err) == "film.mkv: --sample-fps must be from 0.1 to 1000, got 0"
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is ConfigError and copy.param == "sample_fps" and str(copy) == str(err)
    assert flag("translate_to") == "--translate" and flag("metrics_port") == "--metrics-port"
    plain = InputError("a {param} in a file name is text", "x.mp4")
    assert plain.reason == "a {param} in a file name is text" and describe(plain) == str(plain)


def test_library_option_errors_reach_the_command_line_with_their_flags(capsys: pytest.CaptureFixture[str]) -> None:
    from vidocr.langs import parse_langs
    from vidocr.pipeline import check_task
    from vidocr.types import Task

    with pytest.raises(ConfigError) as lang:
        parse_langs(["xx"])
    assert lang.value.param == "lang" and lang.value.reason.startswith("lang: unknown language or script 'xx'")
    with pytest.raises(ConfigError) as translate:
        check_task("openai", Task.TRANSLATE, None)
    assert translate.value.reason == "translation needs a target language (translate_to LANG)"
    assert describe(translate.value) == "translation needs a target language (--translate LANG)"
    assert main(["extract", "film.mkv", "--lang", "xx"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --lang: unknown language or script 'xx'") and err.count("\n") == 1
