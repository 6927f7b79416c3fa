"""The search's language filter on tracks that store a comma-separated list of languages ("ko,en", as
``index build --lang ko,en`` stores them): any code of the list matches, in the library, the CLI and the API."""

from __future__ import annotations

from pathlib import Path

import pytest

from vidocr._cli import main as cli_main
from vidocr.files import Stamp
from vidocr.index import SearchOptions, open_index, search
from vidocr.index.store import TrackData, save_video

TRACKS = {"ko_en.mp4": "ko,en", "zh.mp4": "zh-Hans", "en.mp4": "en", "fr_ko.mp4": "fr, ko", "none.mp4": None,
          "kok.mp4": "kok"}


@pytest.fixture()
def index(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "lib"
    root.mkdir()
    db = tmp_path / "index.sqlite"
    conn = open_index(db)
    try:
        for name, lang in TRACKS.items():
            (root / name).write_bytes(b"x")
            save_video(conn, str(root / name), Stamp(1, 1), None,
                       [TrackData("ocr", "original", lang, [(0, 1000, f"harbour {name}")])], engine="x")
    finally:
        conn.close()
    return root, db


def _names(db: Path, lang: str | None) -> list[str]:
    conn = open_index(db, readonly=True)
    try:
        return sorted(Path(h.video).name for h in search(conn, "harbour", SearchOptions(lang=lang)).hits)
    finally:
        conn.close()


def test_language_filter_matches_any_code_of_a_stored_list(index: tuple[Path, Path]) -> None:
    _, db = index
    assert _names(db, "ko") == ["fr_ko.mp4", "ko_en.mp4"]  # not "kok"
    assert _names(db, "KO") == ["fr_ko.mp4", "ko_en.mp4"]
    assert _names(db, "en") == ["en.mp4", "ko_en.mp4"]
    assert _names(db, "zh") == ["zh.mp4"]  # a subtag: zh matches zh-Hans
    assert _names(db, "zh-hans") == ["zh.mp4"]
    assert _names(db, "fr") == ["fr_ko.mp4"]
    assert _names(db, "k") == [] and _names(db, "%") == [] and _names(db, "*") == []
    assert len(_names(db, None)) == len(TRACKS)


def test_cli_search_lang_matches_a_list(index: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, db = index
    assert cli_main(["search", "harbour", "--lang", "ko", "--json", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "ko_en.mp4" in out and "fr_ko.mp4" in out and "zh.mp4" not in out and "kok.mp4" not in out
    assert cli_main(["search", "harbour", "--lang", "de", "--db", str(db)]) == 0
    err = capsys.readouterr().err
    assert "languages in the index: en, fr, ko, kok, zh-Hans" in err, err


def test_api_search_lang_matches_a_list(index: tuple[Path, Path]) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from vidocr.serve import ServeSettings
    from vidocr.serve.app import create_app

    root, db = index
    with TestClient(create_app(ServeSettings(roots=(root,), db=db, worker=False))) as client:
        def names(lang: str) -> list[str]:
            r = client.get("/api/v1/search", params={"q": "harbour", "lang": lang})
            assert r.status_code == 200, r.text
            return sorted(Path(h["path"]).name for h in r.json()["hits"])

        assert names("ko") == ["fr_ko.mp4", "ko_en.mp4"]
        assert names("en") == ["en.mp4", "ko_en.mp4"]
        assert names("zh") == ["zh.mp4"]
