"""`vidocr serve`'s security: no path outside the library roots (every traversal variant), API keys (missing,
wrong, revoked, read-only), media tokens, rate limits, upload limits, headers, no cookies, no keys in logs, the
refusal to listen beyond loopback without keys, and the `vidocr keys` / `vidocr serve` commands."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("fastapi")
pytest_plugins = ["support.serve_fixtures"]

from fastapi.testclient import TestClient  # noqa: E402

from vidocr.errors import ConfigError  # noqa: E402
from vidocr.index.db import open_index  # noqa: E402
from vidocr.serve.app import create_app  # noqa: E402
from vidocr.serve.auth import create_key, revoke_key  # noqa: E402

if TYPE_CHECKING:
    from support.serve_fixtures import Library


@pytest.fixture(scope="module")
def guarded(serve_library: Library, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A library copy with links pointing out of it, an index with a full, a read-only and a revoked key."""
    from vidocr.extractor import Extractor
    from vidocr.index import BuildOptions, build_index

    base = tmp_path_factory.mktemp("guarded")
    root = base / "library"
    shutil.copytree(serve_library.root, root)
    outside = base / "private"
    outside.mkdir()
    shutil.copy(serve_library.root / "harbour.mp4", outside / "secret.mp4")
    db = base / "index.sqlite"
    with Extractor() as extractor:
        build_index(db, [root, outside], BuildOptions(extract=extractor, lang="en"))
    os.symlink(outside / "secret.mp4", root / "link.mp4")
    os.symlink(outside, root / "linkdir")
    conn = open_index(db)
    try:
        _, full = create_key(conn, "editor")
        _, read = create_key(conn, "reader", "read")
        _, revoked = create_key(conn, "old laptop")
        revoke_key(conn, "old laptop")
        secret_id = conn.execute("SELECT id FROM videos WHERE path LIKE '%secret.mp4'").fetchone()[0]
        harbour_id = conn.execute("SELECT id FROM videos WHERE path LIKE '%harbour.mp4'").fetchone()[0]
    finally:
        conn.close()
    from vidocr.serve import ServeSettings

    settings = ServeSettings(roots=(root,), db=db, worker=False, rate=1000, burst=1000, max_upload_bytes=20_000)
    with TestClient(create_app(settings)) as client:
        yield {"client": client, "full": full, "read": read, "revoked": revoked, "root": root, "db": db,
               "secret": secret_id, "harbour": harbour_id, "settings": settings, "outside": outside}


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


TRAVERSALS = [
    "../private/secret.mp4",
    "sub/../../private/secret.mp4",
    "./harbour.mp4",
    "%2e%2e/private/secret.mp4",
    "%252e%252e/private/secret.mp4",
    "..%2fprivate%2fsecret.mp4",
    "..%252fprivate%252fsecret.mp4",
    "sub%2f..%2f..%2fprivate%2fsecret.mp4",
    "..\\private\\secret.mp4",
    "harbour.mp4\x00.txt",
    "link.mp4",
    "linkdir/secret.mp4",
    "~/secret.mp4",
    "C:/private/secret.mp4",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_job_paths_never_leave_the_roots(guarded: dict[str, Any], path: str) -> None:
    client = guarded["client"]
    r = client.post("/api/v1/jobs", json={"path": path}, headers=bearer(guarded["full"]))
    assert r.status_code == 403, r.text
    assert "error" in r.json() and "\n" not in r.json()["error"]
    assert client.get("/api/v1/jobs", headers=bearer(guarded["full"])).json()["counts"]["pending"] == 0


def test_absolute_paths_are_refused_even_inside_a_root(guarded: dict[str, Any]) -> None:
    client = guarded["client"]
    for path in (str(guarded["outside"] / "secret.mp4"), str(guarded["root"] / "harbour.mp4"), "/etc/passwd"):
        r = client.post("/api/v1/jobs", json={"path": path}, headers=bearer(guarded["full"]))
        assert r.status_code == 403 and "relative" in r.json()["error"]
    r = client.post("/api/v1/jobs", json={"path": "harbour.mp4", "root": 5}, headers=bearer(guarded["full"]))
    assert r.status_code == 403


@pytest.mark.parametrize("folder", ["..", "../private", "%2e%2e", "linkdir", "/tmp", "sub/../.."])
def test_search_folder_filter_never_leaves_the_roots(guarded: dict[str, Any], folder: str) -> None:
    r = guarded["client"].get("/api/v1/search", params={"q": "lighthouse", "folder": folder},
                              headers=bearer(guarded["read"]))
    assert r.status_code == 403, r.text


def test_an_indexed_video_outside_the_roots_is_never_served(guarded: dict[str, Any]) -> None:
    client, secret, headers = guarded["client"], guarded["secret"], bearer(guarded["full"])
    for url in (f"/api/v1/videos/{secret}", f"/api/v1/videos/{secret}/stream", f"/api/v1/videos/{secret}/band?ms=500",
                f"/api/v1/videos/{secret}/subtitles.srt"):
        r = client.get(url, headers=headers)
        assert r.status_code == 403, (url, r.text)
    assert client.post(f"/api/v1/videos/{secret}/export", json={"format": "srt"}, headers=headers).status_code == 403
    hits = client.get("/api/v1/search", params={"q": "lighthouse"}, headers=headers).json()["hits"]
    assert hits and all("secret" not in h["path"] and "private" not in h["mpv"] for h in hits)
    assert not (guarded["outside"] / "secret.srt").exists()


@pytest.mark.parametrize("url", [
    "/static/../../../../etc/passwd", "/static/..%2f..%2f..%2fetc%2fpasswd", "/static/%2e%2e/%2e%2e/etc/passwd",
    "/api/v1/videos/..%2f..%2fetc%2fpasswd/stream", "/api/v1/videos/1%00/stream", "/%2e%2e/%2e%2e/etc/passwd",
])
def test_url_paths_cannot_reach_files(guarded: dict[str, Any], url: str) -> None:
    r = guarded["client"].get(url, headers=bearer(guarded["full"]))
    assert r.status_code in (404, 422), (url, r.status_code)
    assert "root:" not in r.text


def test_keys_missing_wrong_revoked_and_read_only(guarded: dict[str, Any]) -> None:
    client = guarded["client"]
    search = "/api/v1/search?q=lighthouse"
    assert client.get(search).status_code == 401
    assert client.get(search).headers["www-authenticate"] == "Bearer"
    assert client.get(search, headers=bearer("vidocr_" + "x" * 43)).status_code == 401
    assert client.get(search, headers=bearer(guarded["revoked"])).status_code == 401
    assert client.get(search, headers={"Authorization": f"Basic {guarded['full']}"}).status_code == 401
    assert client.get(search, headers=bearer(guarded["full"][:-1])).status_code == 401
    assert client.get(search, headers=bearer(guarded["read"])).status_code == 200
    assert client.get(search, headers=bearer(guarded["full"])).status_code == 200
    vid = guarded["harbour"]
    read = bearer(guarded["read"])
    cues = client.get(f"/api/v1/videos/{vid}/cues", headers=read).json()["cues"]
    for method, url, body in (("PUT", f"/api/v1/videos/{vid}/cues", {"cues": cues}),
                              ("POST", f"/api/v1/videos/{vid}/export", {"format": "srt"}),
                              ("POST", "/api/v1/jobs", {"path": "harbour.mp4"}),
                              ("DELETE", "/api/v1/jobs/1", None)):
        r = client.request(method, url, json=body, headers=read)
        assert r.status_code == 403 and "read-only" in r.json()["error"], (method, url)
    assert client.get("/metrics").status_code == 401
    assert client.get("/healthz").status_code == 200  # health only, no data


def test_revoking_takes_effect_at_once_with_its_media_tokens(guarded: dict[str, Any]) -> None:
    conn = open_index(guarded["db"])
    try:
        _, key = create_key(conn, "temporary", "read")
    finally:
        conn.close()
    client, vid = guarded["client"], guarded["harbour"]
    meta = client.get(f"/api/v1/videos/{vid}", headers=bearer(key)).json()
    token = meta["media_token"]
    ranged = client.get(f"/api/v1/videos/{vid}/stream", params={"token": token}, headers={"Range": "bytes=0-9"})
    assert ranged.status_code == 206 and len(ranged.content) == 10
    assert client.get(f"/api/v1/videos/{vid}/band", params={"ms": 500, "token": token}).status_code == 200
    other = guarded["secret"]
    assert client.get(f"/api/v1/videos/{other}/stream", params={"token": token}).status_code == 401
    tampered = token[:-1] + ("0" if token[-1] != "0" else "1")
    assert client.get(f"/api/v1/videos/{vid}/stream", params={"token": tampered}).status_code == 401
    assert client.get("/api/v1/search", params={"q": "x", "token": token}).status_code == 401  # media only
    conn = open_index(guarded["db"])
    try:
        revoke_key(conn, "temporary")
    finally:
        conn.close()
    assert client.get(f"/api/v1/videos/{vid}", headers=bearer(key)).status_code == 401
    assert client.get(f"/api/v1/videos/{vid}/stream", params={"token": token}).status_code == 401


def keyless_index(library: Library, folder: Path) -> Path:
    """A copy of the library's index in ``folder`` without any API key."""
    db = folder / "index.sqlite"
    shutil.copy(library.db, db)
    conn = open_index(db)
    try:
        conn.execute("DELETE FROM api_keys")
    finally:
        conn.close()
    return db


def test_a_key_created_while_the_server_runs_is_required_at_once(serve_library: Library, tmp_path: Path) -> None:
    import time

    db = keyless_index(serve_library, tmp_path)
    with TestClient(create_app(serve_library.settings(db=db))) as client:
        assert client.get("/api/v1/videos").status_code == 200  # loopback without keys: open
        conn = open_index(db)
        try:
            _, key = create_key(conn, "late")
        finally:
            conn.close()
        time.sleep(1.1)
        assert client.get("/api/v1/videos").status_code == 401
        assert client.get("/api/v1/videos", headers=bearer(key)).status_code == 200


def test_rate_limit_answers_429_with_retry_after(serve_library: Library, tmp_path: Path) -> None:
    from vidocr.serve.auth import RateLimiter

    db = tmp_path / "index.sqlite"
    shutil.copy(serve_library.db, db)
    conn = open_index(db)
    try:
        _, key = create_key(conn, "hasty", "read")
        _, other = create_key(conn, "patient", "read")
    finally:
        conn.close()
    now = [1000.0]
    with TestClient(create_app(serve_library.settings(db=db))) as client:
        client.app.state.vidocr.limiter = RateLimiter(0.5, 3, clock=lambda: now[0])  # type: ignore[attr-defined]
        codes = [client.get("/api/v1/videos", headers=bearer(key)).status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        r = client.get("/api/v1/videos", headers=bearer(key))
        assert r.status_code == 429 and r.headers["retry-after"] == "2" and "rate limit" in r.json()["error"]
        assert client.get("/api/v1/videos", headers=bearer(other)).status_code == 200  # per key
        now[0] += 1.0  # half a token: still refused, a second to wait
        r = client.get("/api/v1/videos", headers=bearer(key))
        assert r.status_code == 429 and r.headers["retry-after"] == "1"
        now[0] += 1.0
        assert client.get("/api/v1/videos", headers=bearer(key)).status_code == 200


def test_uploads_over_the_limit_or_not_video_are_refused(guarded: dict[str, Any]) -> None:
    client, headers = guarded["client"], bearer(guarded["full"])
    uploads = guarded["settings"].uploads
    before = sorted(uploads.rglob("*"))
    big = client.post("/api/v1/uploads", params={"filename": "big.mp4"}, content=b"\x00" * 20_001, headers=headers)
    assert big.status_code == 413 and "20000" in big.json()["error"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is counted while it streams
        for _ in range(30):
            yield b"\x00" * 1000

    streamed = client.post("/api/v1/uploads", params={"filename": "big2.mp4"}, content=chunks(), headers=headers)
    assert streamed.status_code == 413
    text = client.post("/api/v1/uploads", params={"filename": "readme.mp4"}, content=b"hello\n" * 100,
                       headers=headers)
    assert text.status_code == 422 and "readme.mp4" in text.json()["error"]
    assert sorted(uploads.rglob("*")) == before  # nothing kept
    read = client.post("/api/v1/uploads", params={"filename": "x.mp4"}, content=b"x", headers=bearer(guarded["read"]))
    assert read.status_code == 403


def test_headers_no_cookies_and_no_5xx_on_bad_input(guarded: dict[str, Any]) -> None:
    client, headers = guarded["client"], bearer(guarded["full"])
    for url in ("/", "/api/v1/search?q=harbour", "/api/v1/nothing"):
        r = client.get(url, headers=headers)
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"
        assert "set-cookie" not in r.headers
    assert client.get("/api/v1/nothing", headers=headers).json() == {"error": "Not Found"}
    vid = guarded["harbour"]
    for q in ('"unclosed', "NEAR(", "a OR", "-", "*", "((", "NEAR/x(a b)", "\\", "'", "AND AND"):
        r = client.get("/api/v1/search", params={"q": q}, headers=headers)  # lenient parser or a 4xx line
        assert r.status_code < 500 and "error" in r.json() or "hits" in r.json(), (q, r.text)
    bad = [
        ("GET", "/api/v1/search?q=a&limit=99999999999999999999", None), ("GET", "/api/v1/search?q=%00", None),
        ("GET", f"/api/v1/videos/{vid}/band?ms=-1", None), ("GET", f"/api/v1/videos/{vid}/band?ms=99999999", None),
        ("GET", "/api/v1/videos/99999999999999999999999", None), ("PUT", f"/api/v1/videos/{vid}/cues", {"cues": 5}),
        ("PUT", f"/api/v1/videos/{vid}/cues", {"cues": [{"start_ms": 0, "end_ms": 10, "text": "a\x00b"}]}),
        ("POST", "/api/v1/jobs", {"path": ""}), ("POST", "/api/v1/jobs", {"path": "nothing-here.mp4"}),
        ("POST", "/api/v1/jobs", {"path": "sub"}), ("GET", f"/api/v1/videos/{vid}/stream", None),
    ]
    for method, url, body in bad:
        extra = {"Range": "bytes=5-2"} if url.endswith("/stream") else {}
        r = client.request(method, url, json=body, headers={**headers, **extra})
        assert 400 <= r.status_code < 500, (method, url, r.status_code, r.text)
        assert r.headers["content-type"].startswith("application/json") and "Traceback" not in r.text


def test_logs_never_hold_keys_or_tokens(guarded: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="vidocr")
    client, vid = guarded["client"], guarded["harbour"]
    token = client.get(f"/api/v1/videos/{vid}", headers=bearer(guarded["full"])).json()["media_token"]
    client.get(f"/api/v1/videos/{vid}/stream", params={"token": token}, headers={"Range": "bytes=0-1"})
    client.get("/api/v1/search", params={"q": "harbour"}, headers=bearer(guarded["read"]))
    client.get("/api/v1/search", params={"q": "harbour"}, headers=bearer(guarded["revoked"]))
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith(("vidocr", "uvicorn")))
    assert "GET /api/v1/search 200" in logged and "key=reader" in logged
    for secret in (guarded["full"], guarded["read"], guarded["revoked"], token, token.split(".")[-1]):
        assert secret not in logged


def test_listening_beyond_loopback_needs_keys(serve_library: Library, tmp_path: Path) -> None:
    lonely = keyless_index(serve_library, tmp_path)
    with pytest.raises(ConfigError, match="without API keys"):
        create_app(serve_library.settings(db=lonely, host="0.0.0.0"))
    with pytest.raises(ConfigError, match="without API keys"):
        create_app(serve_library.settings(db=lonely, host="::"))
    assert create_app(serve_library.settings(db=lonely, host="::1")).state.vidocr.keys_required is False
    conn = open_index(lonely)
    try:
        create_key(conn, "remote")
    finally:
        conn.close()
    state = create_app(serve_library.settings(db=lonely, host="0.0.0.0")).state.vidocr
    assert state.keys_required


def test_keys_and_serve_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vidocr._cli import main

    db = str(tmp_path / "keys.sqlite")
    assert main(["keys", "--db", db, "create", "tv", "--read-only"]) == 0
    key = capsys.readouterr().out.strip()
    assert key.startswith("vidocr_") and len(key) > 40
    assert main(["keys", "--db", db, "list"]) == 0
    listed = capsys.readouterr().out
    assert "tv" in listed and "read" in listed and key not in listed and key[:12] in listed
    conn = open_index(db)
    try:
        stored = " ".join(str(v) for row in conn.execute("SELECT * FROM api_keys") for v in row)
    finally:
        conn.close()
    assert key not in stored  # only its hash
    assert main(["keys", "--db", db, "revoke", "tv"]) == 0
    assert main(["keys", "--db", db, "revoke", "tv"]) == 2
    assert "no active key" in capsys.readouterr().err
    lib = tmp_path / "lib"
    lib.mkdir()
    fresh = str(tmp_path / "fresh.sqlite")
    assert main(["serve", str(lib), "--db", fresh, "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "without API keys" in err and err.count("\n") == 1
    assert main(["serve", str(tmp_path / "missing"), "--db", fresh]) == 2
    assert main(["serve", str(lib), "--db", fresh, "--max-upload", "lots"]) == 2
    assert main(["serve", str(lib), "--db", fresh, "--rank-window", "0"]) == 2
    err = capsys.readouterr().err
    assert "--rank-window must be a whole number from 1 to 1000000" in err and "Traceback" not in err


def test_example_config_and_systemd_unit_agree() -> None:
    from vidocr._cli import build_parser
    from vidocr._cli.config import apply_config

    root = Path(__file__).resolve().parent.parent
    parser = build_parser()
    argv = ["serve", "--config", str(root / "configs" / "serve.yaml")]
    apply_config(parser, argv, "serve")
    args = parser.parse_args(argv)
    assert args.dirs and args.db and args.host == "127.0.0.1" and args.port == 8765 and args.stop_timeout == 60
    keys_argv = ["keys", "--config", str(root / "configs" / "serve.yaml"), "list"]
    apply_config(parser, keys_argv, "keys")
    assert parser.parse_args(keys_argv).db == args.db  # `vidocr keys --config` finds the server's index
    unit = (root / "configs" / "vidocr-serve.service").read_text(encoding="utf-8")
    assert "vidocr serve --config /etc/vidocr/serve.yaml" in unit and "KillSignal=SIGTERM" in unit
    assert float(unit.split("TimeoutStopSec=")[1].split()[0]) > args.stop_timeout + 10


def test_search_hits_paths_are_checked_with_links_resolved(tmp_path: Path) -> None:
    """Search pages resolve each video's folder once a while (RealFolders) and the file itself every time: a file
    linked out of the root, a folder linked out, and a folder replaced by a link (once the folder's entry is
    older than the time to live) all fall outside; a file inside keeps its path below the root."""
    from vidocr.serve.paths import RealFolders, relative

    root, outside = tmp_path / "library", tmp_path / "private"
    (root / "show").mkdir(parents=True)
    outside.mkdir()
    (root / "show" / "ep1.mp4").write_bytes(b"x")
    (outside / "secret.mp4").write_bytes(b"x")
    os.symlink(outside / "secret.mp4", root / "show" / "link.mp4")
    os.symlink(outside, root / "away")
    clock = [100.0]
    folders = RealFolders((root.resolve(),), ttl_s=5.0, clock=lambda: clock[0])
    for path in (root / "show" / "ep1.mp4", root / "show" / "link.mp4", root / "away" / "secret.mp4",
                 outside / "secret.mp4", root / "show" / "gone.mp4"):
        assert folders.relative(str(path)) == relative(str(path), (root.resolve(),)), path
    assert folders.relative(str(root / "show" / "ep1.mp4")) == (0, "show/ep1.mp4")
    assert folders.relative(str(root / "away" / "secret.mp4")) is None
    shutil.move(str(root / "show"), str(outside / "show"))
    os.symlink(outside / "show", root / "show")  # the folder is now a link out of the root
    clock[0] += 6.0
    assert folders.relative(str(root / "show" / "ep1.mp4")) is None
