"""Search operators (OR, NOT, -word, NEAR), simplified and traditional Chinese finding each other, and indexes
made before that fold (issue #12), on real SQLite files."""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from pathlib import Path

import pytest

from vidocr.errors import ConfigError, IndexError_
from vidocr.index import text
from vidocr.index.db import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, open_index, transaction
from vidocr.index.search import SearchOptions, search
from vidocr.index.text import fold_chinese, parse_query

CUES = [
    "the cat sat on the mat",
    "the dog sat on the log",
    "a cat and a dog",
    "the fox ran away from the cat",
    "cat " + "word " * 20 + "dog",  # cat and dog far apart
    "善後的事情明天再說",  # traditional
    "善后处理已经完成",  # simplified
    "他頭髮很長",  # traditional 頭髮 (simplified 头发)
]


def add_cues(conn: sqlite3.Connection, texts: list[str], path: str = "/v/a.mp4") -> None:
    with transaction(conn):
        video = conn.execute(
            "INSERT INTO videos (path, size, mtime_ns, status, indexed_at) VALUES (?, 1, 1, 'ok', 0)", (path,)
        ).lastrowid
        track = conn.execute(
            "INSERT INTO tracks (video_id, source, kind) VALUES (?, 'ocr', 'original')", (video,)
        ).lastrowid
        for i, cue in enumerate(texts):
            conn.execute("INSERT INTO cues (track_id, start_ms, end_ms, text) VALUES (?, ?, ?, ?)",
                         (track, i * 1000, i * 1000 + 900, cue))


@pytest.fixture()
def conn(tmp_path: Path) -> sqlite3.Connection:
    db = open_index(tmp_path / "i.sqlite")
    add_cues(db, CUES)
    return db


def found(conn: sqlite3.Connection, query: str) -> list[str]:
    return sorted(h.text for h in search(conn, query, SearchOptions(limit=50)).hits)


def test_or_not_minus_and_near_are_operators(conn: sqlite3.Connection) -> None:
    assert found(conn, "fox OR mat") == sorted([CUES[0], CUES[3]])
    assert found(conn, "cat -dog") == sorted([CUES[0], CUES[3]])
    assert found(conn, "cat NOT dog") == found(conn, "cat -dog")
    assert found(conn, 'cat -"the fox"') == sorted([CUES[0], CUES[2], CUES[4]])
    assert found(conn, "cat NEAR dog") == [CUES[2]]  # within 10 words; the cue with 20 words between is not
    assert found(conn, "cat NEAR/30 dog") == sorted([CUES[2], CUES[4]])
    # OR binds tighter than the implicit AND: sat, and (cat or log).
    assert found(conn, "sat cat OR log") == sorted([CUES[0], CUES[1]])
    assert found(conn, "cat AND dog") == found(conn, "cat dog")
    # Lower case: the words themselves.
    assert found(conn, "and") == [CUES[2]]


def test_operators_become_fts5_expressions() -> None:
    assert parse_query('hello wor* "big cat"').match == '"hello" AND "wor"* AND "big" + "cat"'
    assert parse_query("a b OR c").match == '"a" AND ("b" OR "c")'
    assert parse_query("a -b NOT c").match == '"a" NOT "b" NOT "c"'
    assert parse_query("a NEAR/3 b OR c").match == '(NEAR("a" "b", 3) OR "c")'
    assert parse_query('"OR" or').match == '"OR" AND "or"'  # quoted or lower case: a word
    # Excluded terms are not highlighted.
    assert [[u.text for u in units] for units in parse_query("cat -dog").terms] == [["cat"]]


@pytest.mark.parametrize("query, expect", [
    ("-cat", "only exclude"),
    ("NOT cat", "only exclude"),
    ("OR", "OR needs a term on each side"),
    ("cat OR", "OR needs a term on each side"),
    ("NEAR dog", "NEAR needs a term on each side"),
    ("cat NOT", "NOT needs a term after it"),
    ("cat OR -dog", "cannot follow NOT or stand inside OR"),
    (" ,,, ", "nothing to search for"),
])
def test_queries_that_cannot_run_are_one_line(query: str, expect: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_query(query)
    assert expect in str(err.value) and "\n" not in str(err.value)


def test_simplified_and_traditional_find_each_other(conn: sqlite3.Connection) -> None:
    both = sorted([CUES[5], CUES[6]])
    assert found(conn, "善后") == both
    assert found(conn, "善後") == both
    assert found(conn, "头发") == [CUES[7]] and found(conn, "頭髮") == [CUES[7]]
    assert found(conn, "后") == both  # one character: a prefix of the folded tokens
    hit = search(conn, "善后", SearchOptions(marks=("[", "]"))).hits
    assert sorted(h.highlighted for h in hit) == sorted(["[善後]的事情明天再說", "[善后]处理已经完成"])  # as written


def test_the_fold_is_character_by_character_and_stable() -> None:
    # Phrase-level conversion keeps 著名 but turns 著 alone into 着; folding per character keeps substrings matching.
    assert fold_chinese("著名") == fold_chinese("著") + fold_chinese("名")
    sample = "善後頭髮說話發現乾隆裡面為什麼"
    assert len(fold_chinese(sample)) == len(sample)
    assert fold_chinese(fold_chinese(sample)) == fold_chinese(sample)
    assert fold_chinese("hello, 你好") == "hello, 你好"


def _v1_body(cue: str) -> str:
    """What schema v1 stored for a cue (no traditional -> simplified fold)."""
    return text._CJK_RUN.sub(text._expand_run, unicodedata.normalize("NFKC", cue))


def make_v1_index(path: Path, texts: list[str]) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function("vidocr_fts_body", 1, _v1_body, deterministic=True)
    conn.executescript(MIGRATIONS[0])
    conn.execute("PRAGMA user_version = 1")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    add_cues(conn, texts)
    conn.close()


def test_an_index_from_before_the_fold_is_upgraded_by_a_build(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    make_v1_index(db, CUES)
    with pytest.raises(IndexError_) as err:
        open_index(db, readonly=True)  # search and status: a hint, not wrong answers
    assert "index build" in str(err.value) and "v1" in str(err.value)
    conn = open_index(db)  # what index build and watch do: migrate, rebuilding the search table
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert found(conn, "善后") == sorted([CUES[5], CUES[6]])
        assert found(conn, "cat -dog") == sorted([CUES[0], CUES[3]])
        conn.execute("INSERT INTO cue_fts(cue_fts, rank) VALUES ('integrity-check', 1)")  # raises on a mismatch
    finally:
        conn.close()


def test_cli_takes_minus_words_anywhere_and_hints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vidocr._cli import main

    db = tmp_path / "i.sqlite"
    conn = open_index(db)
    add_cues(conn, CUES)
    conn.close()

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["search", *args, "--db", str(db), "--limit", "50"])
        out, err = capsys.readouterr()
        return code, out, err

    def shown(out: str) -> int:
        return sum(1 for line in out.splitlines() if not line.startswith("    "))

    code, out, err = run("cat", "-dog")  # no "--" needed: -dog is a word to exclude, not an unknown option
    assert code == 0 and shown(out) == 2 and "[cat]" in out and "dog" not in out, err
    code, out, _ = run("-dog", "cat", "--json")
    assert code == 0 and len(json.loads(out)["hits"]) == 2
    code, out, err = run("cat", "-dog", "OR", "fox")
    assert code == 2 and out == "" and "-word" in err and err.count("\n") == 1
    code, out, err = run("善後")
    assert code == 0 and shown(out) == 2 and "[善后]处理" in out and "[善後]的" in out
    code, out, err = run("zebra", "or", "cat")  # lower case "or" is a word: nothing matches all three
    assert code == 0 and out == "" and "no matches" in err and "lower case" in err
    code, _, err = run("cat", "--lang", "en")
    assert code == 0 and "no track has a language" in err
    with pytest.raises(SystemExit) as stop:  # an unknown option stays argparse's usage error
        main(["search", "cat", "--limt", "3", "--db", str(db)])
    assert stop.value.code == 2 and "unrecognized arguments: --limt" in capsys.readouterr().err
