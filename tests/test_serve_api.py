"""`vidocr serve`'s API over the real app (TestClient) and a real index of generated videos extracted with RapidOCR:
search with paging and filters, metadata, cues, every subtitle format, band images, Range streaming, edits as
revisions that a re-extraction keeps, atomic export, and jobs through the daemon's queue."""

from __future__ import annotations

import io
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from PIL import Image

if TYPE_CHECKING:
    from support.serve_fixtures import Library

pytest.importorskip("fastapi")
pytest_plugins = ["support.serve_fixtures"]

from fastapi.testclient import TestClient  # noqa: E402
from support.net import free_port  # noqa: E402
from support.serve_fixtures import copy_index, copy_library  # noqa: E402
from support.synth import read_srt  # noqa: E402

from vidocr.serve.app import create_app  # noqa: E402

FRAME_MS = 40


def video_id(client: TestClient, name: str) -> int:
    videos = client.get("/api/v1/videos").json()["videos"]
    return next(v["id"] for v in videos if v["path"] == name)


def test_search_groups_hits_by_video_highlights_and_pages(serve_client: TestClient) -> None:
    r = serve_client.get("/api/v1/search", params={"q": "lighthouse"})
    assert r.status_code == 200, r.text
    hits = r.json()["hits"]
    assert sorted((h["path"], h["start_ms"]) for h in hits) == [
        ("harbour.mp4", 400), ("harbour.mp4", 3600), ("sub/forest.mp4", 2200)]
    for hit in hits:
        a, b = hit["spans"][0]
        assert hit["text"][a:b].lower() == "lighthouse"
        assert hit["mpv"].startswith("mpv --start=00:00:0") and hit["mpv"].endswith(hit["path"])
        assert hit["video_id"] == video_id(serve_client, hit["path"])
        cues = serve_client.get(f"/api/v1/videos/{hit['video_id']}/cues").json()["cues"]
        assert [c["text"] for c in cues if c["id"] == hit["cue_id"]] == [hit["text"]]
        band = serve_client.get(f"/api/v1/cues/{hit['cue_id']}/band", params={"token": hit["media_token"]})
        assert band.status_code == 200 and band.headers["content-type"] == "image/jpeg"
    # the index also holds ../private/secret.mp4 (the same cues): it is outside the served root, never shown
    assert all("secret" not in json.dumps(h) for h in hits)
    first = serve_client.get("/api/v1/search", params={"q": "lighthouse", "limit": 1}).json()
    second = serve_client.get("/api/v1/search", params={"q": "lighthouse", "limit": 1, "offset": 1}).json()
    assert first["more"] and len(first["hits"]) == 1 and len(second["hits"]) == 1
    assert (first["hits"][0]["path"], first["hits"][0]["start_ms"]) != (second["hits"][0]["path"],
                                                                        second["hits"][0]["start_ms"])


def test_search_query_language_and_filters(serve_client: TestClient, serve_library: Library) -> None:
    starts = {name: [t.start_ms for t in truth] for name, truth in serve_library.truth.items()}

    def found(**params: Any) -> list[tuple[str, int]]:
        r = serve_client.get("/api/v1/search", params=params)
        assert r.status_code == 200, r.text
        return sorted((h["path"], h["start_ms"]) for h in r.json()["hits"])

    assert found(q="lighthouse -nobody") == [("harbour.mp4", 400), ("sub/forest.mp4", 2200)]
    assert found(q="harbour OR forest") == [("harbour.mp4", starts["harbour.mp4"][1]),
                                            ("sub/forest.mp4", starts["sub/forest.mp4"][0])]
    assert found(q="lighthouse", folder="sub") == [("sub/forest.mp4", 2200)]
    assert found(q="lighthouse", lang="en") == found(q="lighthouse")
    assert found(q="lighthouse", lang="fr") == []
    assert found(q="lighthouse", modified_after=time.time() + 3600) == []
    assert len(found(q="lighthouse", modified_before=time.time() + 3600)) == 3
    bad = serve_client.get("/api/v1/search", params={"q": "x", "limit": 0})
    assert bad.status_code == 422 and "limit" in bad.json()["error"]
    whole = serve_client.get("/api/v1/search", params={"q": "lighthouse"}).json()
    assert not whole["windowed"] and len(whole["hits"]) == 3


def test_rank_window_ranks_only_the_newest_matches(serve_library: Library, serve_client: TestClient) -> None:
    with TestClient(create_app(serve_library.settings(rank_window=3))) as client:
        narrow = client.get("/api/v1/search", params={"q": "lighthouse"}).json()
    whole = serve_client.get("/api/v1/search", params={"q": "lighthouse"}).json()
    # the three newest of five matches only (two are in the index's copy outside the roots, never shown)
    assert narrow["windowed"] and not whole["windowed"] and len(whole["hits"]) == 3
    shown = {h["cue_id"] for h in narrow["hits"]}
    assert 1 <= len(shown) < 3 and shown < {h["cue_id"] for h in whole["hits"]}


def test_metadata_and_cues_are_the_extraction(serve_client: TestClient, serve_library: Library) -> None:
    vid = video_id(serve_client, "harbour.mp4")
    meta = serve_client.get(f"/api/v1/videos/{vid}").json()
    assert meta["probe"] == {"width": 480, "height": 270, "fps": 25.0, "duration_s": 5.2, "codec": "h264",
                             "mime": "video/mp4", "playable": True}
    assert meta["path"] == "harbour.mp4" and meta["status"] == "ok" and not meta["revisions"]["edited"]
    cues = serve_client.get(f"/api/v1/videos/{vid}/cues").json()["cues"]
    truth = serve_library.truth["harbour.mp4"]
    assert [c["text"] for c in cues] == [t.text for t in truth]
    for cue, t in zip(cues, truth, strict=True):
        assert abs(cue["start_ms"] - t.start_ms) <= FRAME_MS and abs(cue["end_ms"] - t.end_ms) <= FRAME_MS
        assert 0.5 < cue["confidence"] <= 1.0 and cue["box"][1] > 135  # in the lower half
    assert serve_client.get("/api/v1/videos/9999").status_code == 404


def test_subtitles_in_every_format(serve_client: TestClient, tmp_path: Path) -> None:
    vid = video_id(serve_client, "sub/forest.mp4")
    cues = serve_client.get(f"/api/v1/videos/{vid}/cues").json()["cues"]
    srt = serve_client.get(f"/api/v1/videos/{vid}/subtitles.srt", params={"download": 1})
    assert srt.headers["content-disposition"] == 'attachment; filename="forest.srt"'
    (tmp_path / "f.srt").write_text(srt.text)
    assert [(c.start_ms, c.end_ms, c.text) for c in read_srt(tmp_path / "f.srt")] == [
        (c["start_ms"], c["end_ms"], c["text"]) for c in cues]
    vtt = serve_client.get(f"/api/v1/videos/{vid}/subtitles.vtt").text
    assert vtt.startswith("WEBVTT") and "00:00:02.200 --> " in vtt and cues[1]["text"] in vtt
    ass = serve_client.get(f"/api/v1/videos/{vid}/subtitles.ass").text
    assert ass.count("Dialogue:") == 2 and "PlayResX: 480" in ass
    doc = serve_client.get(f"/api/v1/videos/{vid}/subtitles.json").json()
    assert [c["text"] for c in doc["cues"]] == [c["text"] for c in cues]
    r = serve_client.get(f"/api/v1/videos/{vid}/subtitles.txt")
    assert r.status_code == 404 and "srt" in r.json()["error"]


def test_band_image_shows_the_cue_text(serve_client: TestClient, rapid_engine: Any) -> None:
    from vidocr.types import Task

    vid = video_id(serve_client, "harbour.mp4")
    cue = serve_client.get(f"/api/v1/videos/{vid}/cues").json()["cues"][1]
    mid = (cue["start_ms"] + cue["end_ms"]) // 2
    y, h = cue["box"][1], cue["box"][3]
    png = serve_client.get(f"/api/v1/videos/{vid}/band", params={"ms": mid, "y": y, "h": h, "fmt": "png"})
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    image = np.asarray(Image.open(io.BytesIO(png.content)).convert("RGB"))
    pad = max(8, h // 2)
    assert image.shape[:2] == (min(270, y + h + pad) - (y - pad), 480)
    text = rapid_engine.recognize([image], Task.SUBTITLE)[0].text
    assert text.replace(" ", "") == cue["text"].replace(" ", "")
    by_cue = serve_client.get(f"/api/v1/cues/{cue['id']}/band")
    assert by_cue.headers["content-type"] == "image/jpeg" and Image.open(io.BytesIO(by_cue.content)).width == 480
    # between cues the band holds no text
    empty = serve_client.get(f"/api/v1/videos/{vid}/band", params={"ms": 1800, "y": y, "h": h, "fmt": "png"})
    blank = np.asarray(Image.open(io.BytesIO(empty.content)).convert("RGB"))
    assert rapid_engine.recognize([blank], Task.SUBTITLE)[0].text == ""


def test_stream_answers_range_requests(serve_client: TestClient, serve_library: Library) -> None:
    vid = video_id(serve_client, "harbour.mp4")
    data = (serve_library.root / "harbour.mp4").read_bytes()
    url = f"/api/v1/videos/{vid}/stream"
    whole = serve_client.get(url)
    assert whole.status_code == 200 and whole.content == data and whole.headers["accept-ranges"] == "bytes"
    assert whole.headers["content-type"] == "video/mp4"
    part = serve_client.get(url, headers={"Range": "bytes=100-199"})
    assert part.status_code == 206 and part.content == data[100:200]
    assert part.headers["content-range"] == f"bytes 100-199/{len(data)}"
    tail = serve_client.get(url, headers={"Range": "bytes=-10"})
    assert tail.status_code == 206 and tail.content == data[-10:]
    assert tail.headers["content-range"] == f"bytes {len(data) - 10}-{len(data) - 1}/{len(data)}"
    open_end = serve_client.get(url, headers={"Range": f"bytes={len(data) - 5}-"})
    assert open_end.status_code == 206 and open_end.content == data[-5:]
    beyond = serve_client.get(url, headers={"Range": f"bytes={len(data)}-"})
    assert beyond.status_code == 416 and beyond.headers["content-range"] == f"bytes */{len(data)}"
    assert "error" in beyond.json()


@pytest.fixture()
def own_library(serve_library: Library, tmp_path: Path) -> Library:
    """A copy of the library and its index that a test may change (edits, exports, jobs)."""
    return copy_library(serve_library, tmp_path)


def test_edits_are_revisions_that_win_and_survive_re_extraction(own_library: Library) -> None:
    from vidocr.extractor import Extractor
    from vidocr.index import BuildOptions, build_index
    from vidocr.types import Cue, VideoInfo

    with TestClient(create_app(own_library.settings())) as client:
        vid = video_id(client, "harbour.mp4")
        cues = client.get(f"/api/v1/videos/{vid}/cues").json()["cues"]
        edited = [dict(c) for c in cues]
        edited[0]["text"] = "The lamplighter waved"
        edited[0]["end_ms"] += FRAME_MS
        del edited[2]
        r = client.put(f"/api/v1/videos/{vid}/cues", json={"cues": edited, "base_revision": None})
        assert r.status_code == 200, r.text
        revision = r.json()["revision"]
        now = client.get(f"/api/v1/videos/{vid}/cues").json()
        assert [(c["start_ms"], c["end_ms"], c["text"]) for c in now["cues"]] == [
            (cues[0]["start_ms"], cues[0]["end_ms"] + FRAME_MS, "The lamplighter waved"),
            (cues[1]["start_ms"], cues[1]["end_ms"], cues[1]["text"])]
        assert now["latest_edit"] == revision
        texts = [h["text"] for h in client.get("/api/v1/search", params={"q": "lamplighter"}).json()["hits"]]
        assert texts == ["The lamplighter waved"]
        assert [h["path"] for h in client.get("/api/v1/search", params={"q": "lighthouse"}).json()["hits"]] == [
            "sub/forest.mp4"]  # the edit's text is what is searched
        revs = client.get(f"/api/v1/videos/{vid}/revisions").json()["revisions"]
        assert [r["kind"] for r in revs] == ["ocr", "edit"] and revs[0]["cues"] == 3
        ocr = client.get(f"/api/v1/videos/{vid}/revisions/{revs[0]['id']}").json()["cues"]
        assert [c["text"] for c in ocr] == [c["text"] for c in cues]  # the OCR output is kept
        stale = client.put(f"/api/v1/videos/{vid}/cues", json={"cues": edited, "base_revision": revision - 1})
        assert stale.status_code == 409
        bad = client.put(f"/api/v1/videos/{vid}/cues", json={"cues": [{"start_ms": 500, "end_ms": 400, "text": "x"}]})
        assert bad.status_code == 422 and "cue 1" in bad.json()["error"]

        # a forced re-extraction giving the same output: the edit stays shown, nothing new to look at
        with Extractor() as extractor:
            build_index(own_library.db, [own_library.root], BuildOptions(extract=extractor, lang="en", force=True))
        meta = client.get(f"/api/v1/videos/{vid}").json()
        assert meta["revisions"]["edited"] and not meta["revisions"]["ocr_is_newer"]
        assert meta["revisions"]["count"] == 2
        kept = client.get(f"/api/v1/videos/{vid}/cues").json()["cues"]
        assert [c["text"] for c in kept] == ["The lamplighter waved", cues[1]["text"]]

        # another engine reads otherwise: its output becomes a new OCR revision, offered, not applied
        def other(path: Path) -> tuple[Iterator[Cue], VideoInfo]:
            return iter([Cue(400, 1600, "The lighthouse keeper waved!")]), VideoInfo(str(path), 480, 270, 5.2, 25.0,
                                                                                    "h264")

        build_index(own_library.db, [own_library.root], BuildOptions(extract=other, lang="en", force=True))
        meta = client.get(f"/api/v1/videos/{vid}").json()
        assert meta["revisions"]["ocr_is_newer"] and meta["revisions"]["count"] == 3
        still = client.get(f"/api/v1/videos/{vid}/cues").json()["cues"]
        assert [(c["start_ms"], c["end_ms"], c["text"]) for c in still] == [
            (c["start_ms"], c["end_ms"], c["text"]) for c in kept]
        newest = client.get(f"/api/v1/videos/{vid}/revisions/{meta['revisions']['latest_ocr']}").json()["cues"]
        assert [c["text"] for c in newest] == ["The lighthouse keeper waved!"]

        ab = client.get(f"/api/v1/videos/{vid}/compare", params={"a": 0, "b": meta["revisions"]["latest_ocr"]})
        assert [(p["a"] and p["a"]["text"], p["b"] and p["b"]["text"], p["same"]) for p in ab.json()["pairs"]] == [
            ("The lamplighter waved", "The lighthouse keeper waved!", False), (cues[1]["text"], None, False)]
        same = client.get(f"/api/v1/videos/{vid}/compare", params={"a": 0, "b": revision}).json()["pairs"]
        assert len(same) == 2 and all(p["same"] for p in same)
        assert client.get(f"/api/v1/videos/{vid}/compare", params={"a": 0, "b": 999}).status_code == 404

        out = client.post(f"/api/v1/videos/{vid}/export", json={"format": "srt"})
        assert out.status_code == 200, out.text
        assert out.json()["path"] == "harbour.srt"
        written = read_srt(own_library.root / "harbour.srt")
        assert [(c.start_ms, c.end_ms, c.text) for c in written] == [
            (c["start_ms"], c["end_ms"], c["text"]) for c in kept]
        assert not [p for p in own_library.root.iterdir() if p.name.endswith(".tmp")]
        assert client.post(f"/api/v1/videos/{vid}/export", json={"format": "doc"}).status_code == 422


def _wait_job(client: TestClient, job_id: int, states: tuple[str, ...] = ("done", "failed"),
              timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(f"/api/v1/jobs/{job_id}").json()
        if job["state"] in states or time.monotonic() > deadline:
            return dict(job)
        time.sleep(0.1)


@pytest.fixture()
def worker_client(own_library: Library) -> Iterator[TestClient]:
    with TestClient(create_app(own_library.settings(worker=True))) as client:
        yield client


def test_a_job_runs_through_the_daemon_queue_and_is_searchable(own_library: Library,
                                                               worker_client: TestClient) -> None:
    shutil.copy(own_library.root / "sub" / "forest.mp4", own_library.root / "woods.mp4")
    r = worker_client.post("/api/v1/jobs", json={"path": "woods.mp4"})
    assert r.status_code == 202, r.text
    job = _wait_job(worker_client, r.json()["job"]["id"])
    assert job["state"] == "done" and job["cues"] == 2 and job["progress"] == 1.0 and job["video_id"]
    hits = worker_client.get("/api/v1/search", params={"q": "lighthouse", "folder": "."})
    assert hits.status_code == 403  # '.' is refused like '..'
    paths = {h["path"] for h in worker_client.get("/api/v1/search", params={"q": "forest"}).json()["hits"]}
    assert paths == {"sub/forest.mp4", "woods.mp4"}
    assert (own_library.root / "woods.srt").is_file()  # the daemon's outputs, beside the video
    again = worker_client.post("/api/v1/jobs", json={"path": "woods.mp4"})
    assert again.status_code == 200 and again.json()["queued"] == "known"  # exactly once
    from vidocr.daemon.jobs import JobQueue

    queue = JobQueue(own_library.settings().queue_path)
    try:
        assert queue.counts()["done"] == 1 and len(queue.jobs()) == 1  # one queue, shared with `vidocr watch`
    finally:
        queue.close()
    assert 'vidocr_jobs{state="done"} 1.0' in worker_client.get("/metrics").text  # queue depth by state
    assert 'vidocr_jobs_finished_total{outcome="done"} 1.0' in worker_client.get("/metrics").text
    listed = worker_client.get("/api/v1/jobs").json()
    assert listed["counts"]["done"] == 1 and [j["path"] for j in listed["jobs"]] == ["woods.mp4"]


def test_upload_is_probed_then_queued_and_cancel(own_library: Library) -> None:
    data = (own_library.root / "harbour.mp4").read_bytes()
    with TestClient(create_app(own_library.settings())) as client:  # no worker: jobs wait
        r = client.post("/api/v1/uploads", params={"filename": "../../clip one.mp4"}, content=data)
        assert r.status_code == 202, r.text
        job = r.json()["job"]
        assert job["state"] == "pending" and job["path"].endswith("/clip one.mp4") and job["root"] == 1
        stored = list(own_library.settings().uploads.rglob("clip one.mp4"))
        assert len(stored) == 1 and stored[0].read_bytes() == data
        gone = client.delete(f"/api/v1/jobs/{job['id']}")
        assert gone.status_code == 200 and gone.json()["state"] == "failed" and gone.json()["error"] == "cancelled"
        assert client.delete(f"/api/v1/jobs/{job['id']}").status_code == 409
        back = client.post("/api/v1/jobs", json={"path": job["path"], "root": 1})  # submitted again: runs again
        assert back.status_code == 202 and back.json()["queued"] == "retried"
        assert back.json()["job"]["state"] == "pending" and back.json()["job"]["id"] == job["id"]
        assert client.delete(f"/api/v1/jobs/{job['id']}").json()["error"] == "cancelled"
        named = client.post("/api/v1/uploads", params={"filename": "clip two.mp4", "engine": "rapidocr"},
                            content=data)
        assert named.status_code == 202 and named.json()["job"]["engine"]["engine"] == "rapidocr", named.text
        assert client.delete(f"/api/v1/jobs/{named.json()['job']['id']}").json()["error"] == "cancelled"
        refused = client.post("/api/v1/uploads", params={"filename": "clip three.mp4", "engine": "nope"},
                              content=data)
        assert refused.status_code == 422 and "unknown engine 'nope'" in refused.json()["error"]
        assert not list(own_library.settings().uploads.rglob("clip three.mp4"))  # refused before it was read
        notvideo = client.post("/api/v1/uploads", params={"filename": "notes.mp4"}, content=b"just some text\n" * 50)
        assert notvideo.status_code == 422 and "notes.mp4" in notvideo.json()["error"]
        assert "\n" not in notvideo.json()["error"]
        (own_library.root / "fake.mkv").write_bytes(b"\x1a\x45\xdf\xa3" + b"\x00" * 300)
        fake = client.post("/api/v1/jobs", json={"path": "fake.mkv"})
        assert fake.status_code == 422 and "fake.mkv" in fake.json()["error"]
        assert client.get("/api/v1/jobs", params={"state": "pending"}).json()["jobs"] == []
        assert client.get("/api/v1/jobs/424242").status_code == 404


def test_cancelling_a_running_job_gives_it_back_and_fails_it(own_library: Library) -> None:
    from vidocr.types import Cue, VideoInfo

    started = []

    def slow(path: Path) -> tuple[Iterator[Cue], VideoInfo]:
        def cues() -> Iterator[Cue]:
            started.append(path)
            for i in range(600):
                time.sleep(0.05)
                yield Cue(i * 100, i * 100 + 50, f"line {i}")

        return cues(), VideoInfo(str(path), 480, 270, 5.2, 25.0, "h264")

    with TestClient(create_app(own_library.settings(worker=True, extractor=slow))) as client:
        job = client.post("/api/v1/jobs", json={"path": "harbour.mp4"}).json()["job"]
        running = _wait_job(client, job["id"], ("running",), 10)
        deadline = time.monotonic() + 10  # "running" is stored before the worker pulls the first cue
        while not started and time.monotonic() < deadline:
            time.sleep(0.02)
        assert running["state"] == "running" and started
        assert client.get(f"/api/v1/jobs/{job['id']}").json()["state"] == "running"
        r = client.delete(f"/api/v1/jobs/{job['id']}")
        assert r.status_code == 200 and r.json()["state"] == "failed" and r.json()["error"] == "cancelled"
        cues = client.get(f"/api/v1/videos/{video_id(client, 'harbour.mp4')}/cues").json()["cues"]
        assert len(cues) == 3  # the index kept the earlier extraction


def test_shutdown_lets_the_job_run_then_gives_it_back_untouched(own_library: Library) -> None:
    from vidocr.daemon.jobs import JobQueue
    from vidocr.types import Cue, VideoInfo

    def endless(path: Path) -> tuple[Iterator[Cue], VideoInfo]:
        def cues() -> Iterator[Cue]:
            for i in range(10_000):
                time.sleep(0.02)
                yield Cue(i * 100, i * 100 + 50, f"line {i}")

        return cues(), VideoInfo(str(path), 480, 270, 5.2, 25.0, "h264")

    settings = own_library.settings(worker=True, extractor=endless, stop_timeout_s=0.3)
    with TestClient(create_app(settings)) as client:
        job = client.post("/api/v1/jobs", json={"path": "harbour.mp4"}).json()["job"]
        assert _wait_job(client, job["id"], ("running",), 10)["state"] == "running"
        started = time.monotonic()
    assert time.monotonic() - started < 5  # stopped at the next cue after the stop timeout
    queue = JobQueue(settings.queue_path)
    try:
        back = queue.by_id(job["id"])
    finally:
        queue.close()
    assert back is not None and back.state == "pending" and back.attempts == 0  # resumes on the next start


def test_health_metrics_and_openapi(serve_client: TestClient) -> None:
    assert serve_client.get("/healthz").json()["status"] == "ok"
    serve_client.get("/api/v1/search", params={"q": "forest"})
    text = serve_client.get("/metrics").text
    assert 'vidocr_http_requests_total{method="GET",route="/api/v1/search",status="200"}' in text
    assert 'vidocr_http_request_seconds_bucket{le="0.1",route="/api/v1/search"}' in text
    assert "vidocr_jobs_finished" in text
    spec = serve_client.get("/api/v1/openapi.json").json()
    assert {"/api/v1/search", "/api/v1/jobs", "/api/v1/uploads", "/api/v1/videos/{video_id}/stream"} <= set(
        spec["paths"])
    page = serve_client.get("/")
    assert page.status_code == 200 and '<script src="/static/app.js"' in page.text
    assert serve_client.get("/static/app.js").headers["content-type"].startswith("text/javascript")


def test_vidocr_serve_runs_as_a_process_and_stops_on_sigterm(serve_library: Library, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import urllib.request

    port = free_port()
    db = tmp_path / "index.sqlite"
    copy_index(serve_library.db, db)
    proc = subprocess.Popen([sys.executable, "-m", "vidocr", "serve", str(serve_library.root), "--db", str(db),
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline, health = time.monotonic() + 60, None
        while health is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    health = json.loads(r.read())
            except OSError:
                time.sleep(0.2)
        assert health is not None and health["status"] == "ok" and health["jobs_run_by"] == "this server"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/search?q=forest", timeout=10) as r:
            assert {h["path"] for h in json.loads(r.read())["hits"]} == {"sub/forest.mp4"}
            assert r.headers["server"] is None  # no server banner
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "serving 1 library folder(s) on http://127.0.0.1:" in err and "Traceback" not in err


def test_jobs_queued_by_serve_are_run_by_a_watch_daemon_holding_the_queue(own_library: Library) -> None:
    from vidocr.daemon import WatchOptions
    from vidocr.daemon.service import WatchService
    from vidocr.types import Cue, VideoInfo

    def fake(path: Path) -> tuple[Iterator[Cue], VideoInfo]:
        return iter([Cue(100, 900, "read by the watch daemon")]), VideoInfo(str(path), 480, 270, 5.2, 25.0, "h264")

    settings = own_library.settings(worker=True)
    watch = WatchService(WatchOptions(roots=(own_library.root,), jobs_db=settings.queue_path, db=own_library.db,
                                      once=True, settle_s=0.0, tick_s=0.02), extractor=fake)
    from vidocr.daemon.service import hold_queue_lock

    with hold_queue_lock(settings.queue_path), TestClient(create_app(settings)) as client:  # a daemon runs
        health = client.get("/healthz").json()
        assert not health["worker"] and "another vidocr watch or serve" in health["jobs_run_by"]
        job = client.post("/api/v1/jobs", json={"path": "sub/forest.mp4"}).json()["job"]
        time.sleep(0.5)
        assert client.get(f"/api/v1/jobs/{job['id']}").json()["state"] == "pending"  # not run by the server
    with TestClient(create_app(own_library.settings())) as client:
        watch.run()  # `vidocr watch --once` over the same queue (it also finds harbour.mp4 and runs it)
        done = client.get(f"/api/v1/jobs/{job['id']}").json()
        assert done["state"] == "done" and done["cues"] == 1
        hits = client.get("/api/v1/search", params={"q": "daemon"}).json()["hits"]
        assert {h["path"] for h in hits} == {"sub/forest.mp4", "harbour.mp4"}


def test_several_server_processes_share_one_port_and_the_media_tokens(serve_library: Library, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import urllib.request

    port = free_port()
    db = tmp_path / "index.sqlite"
    copy_index(serve_library.db, db)
    proc = subprocess.Popen([sys.executable, "-m", "vidocr", "serve", str(serve_library.root), "--db", str(db),
                             "--port", str(port), "--processes", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    base = f"http://127.0.0.1:{port}"

    def get(path: str) -> Any:
        with urllib.request.urlopen(base + path, timeout=10) as r:
            return json.loads(r.read()) if r.headers["content-type"].startswith("application/json") else r.status

    try:
        deadline, up = time.monotonic() + 90, False
        while not up and time.monotonic() < deadline and proc.poll() is None:
            try:
                up = get("/healthz")["status"] == "ok"
            except OSError:
                time.sleep(0.3)
        assert up
        vid = next(v["id"] for v in get("/api/v1/videos")["videos"] if v["path"] == "harbour.mp4")
        tokens = {get(f"/api/v1/videos/{vid}")["media_token"] for _ in range(6)}
        for token in tokens:  # each connection may reach either process: every token works in both
            for _ in range(3):
                assert get(f"/api/v1/videos/{vid}/band?ms=500&token={token}") == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "with 2 processes" in err and "Traceback" not in err, err


def test_band_images_of_a_rotated_video_are_turned_as_the_pipeline_sees_them(tmp_path: Path, rapid_engine: Any) -> None:
    from support.synth import SynthCue, SynthSpec, render_video

    from vidocr.extractor import Extractor
    from vidocr.index import BuildOptions, build_index
    from vidocr.serve import ServeSettings
    from vidocr.types import Task

    root = tmp_path / "library"
    root.mkdir()
    render_video(SynthSpec(width=270, height=480, duration=2.0, font_size=18, rotation=90, cut_every=None,
                           cues=(SynthCue(0.4, 1.6, "Turned on its side"),)), root / "phone.mp4")
    with Extractor() as extractor:
        build_index(tmp_path / "index.sqlite", [root], BuildOptions(extract=extractor))
    with TestClient(create_app(ServeSettings(roots=(root,), db=tmp_path / "index.sqlite", worker=False))) as client:
        vid = video_id(client, "phone.mp4")
        probed = client.get(f"/api/v1/videos/{vid}").json()["probe"]
        assert (probed["width"], probed["height"]) == (270, 480)  # as displayed
        cue = client.get(f"/api/v1/videos/{vid}/cues").json()["cues"][0]
        assert cue["text"] == "Turned on its side"
        png = client.get(f"/api/v1/cues/{cue['id']}/band", params={"fmt": "png"})
        image = np.asarray(Image.open(io.BytesIO(png.content)).convert("RGB"))
        assert image.shape[1] == 270  # the displayed width
        assert rapid_engine.recognize([image], Task.SUBTITLE)[0].text.replace(" ", "") == "Turnedonitsside"


def test_jobs_naming_an_engine_are_jobs_of_their_own_compared_side_by_side(own_library: Library) -> None:
    """One video, two engines (the embedded RapidOCR and the openai client against a scripted server): two jobs on
    the one queue, each done once and stored as an OCR revision; the A/B view pairs them."""
    from test_openai_engine import FakeServer, ok

    fake = FakeServer(default=lambda body: ok("Read by the other engine"))
    url = fake.url
    try:
        with TestClient(create_app(own_library.settings(worker=True))) as client:
            vid = video_id(client, "harbour.mp4")
            shown = [c["text"] for c in client.get(f"/api/v1/videos/{vid}/cues").json()["cues"]]
            a = client.post("/api/v1/jobs", json={"path": "harbour.mp4", "engine": "rapidocr"})
            b = client.post("/api/v1/jobs", json={"path": "harbour.mp4", "engine": "openai", "server": [url],
                                                  "model": "fake-ocr", "options": {"retries": 1}})
            assert a.status_code == 202 and b.status_code == 202, (a.text, b.text)
            ids = [a.json()["job"]["id"], b.json()["job"]["id"]]
            assert ids[0] != ids[1]
            assert b.json()["job"]["engine"]["label"] == f"openai model=fake-ocr server={url} retries=1"
            done = [_wait_job(client, i, timeout=120) for i in ids]
            assert [j["state"] for j in done] == ["done", "done"], done
            assert all(j["progress"] == 1.0 and j["video_id"] == vid for j in done)
            again = client.post("/api/v1/jobs", json={"path": "harbour.mp4", "engine": "openai", "server": [url],
                                                      "model": "fake-ocr", "options": {"retries": "1"}})
            assert again.status_code == 200 and again.json()["queued"] == "known"  # exactly once per engine
            assert again.json()["job"]["id"] == ids[1]
            assert fake.bodies and all(body["model"] == "fake-ocr" for body in fake.bodies)

            revs = client.get(f"/api/v1/videos/{vid}/revisions").json()["revisions"]
            assert [r["kind"] for r in revs] == ["ocr", "ocr"]  # RapidOCR read the same again: kept once
            assert [r["engine"] for r in revs] == ["rapidocr", f"openai model=fake-ocr server={url} retries=1"]
            ab = client.get(f"/api/v1/videos/{vid}/compare", params={"a": revs[0]["id"], "b": revs[1]["id"]})
            pairs = ab.json()["pairs"]
            assert [p["a"]["text"] for p in pairs if p["a"]] == shown
            assert {p["b"]["text"] for p in pairs if p["b"]} == {"Read by the other engine"}
            assert not any(p["same"] for p in pairs)
            # the latest extraction is shown (no edit yet) and searched; no subtitle file was written for a trial
            assert "Read by the other engine" in [c["text"] for c in
                                                  client.get(f"/api/v1/videos/{vid}/cues").json()["cues"]]
            assert not (own_library.root / "harbour.srt").exists()
            listed = client.get("/api/v1/jobs").json()["jobs"]
            assert sorted((j["path"], (j["engine"] or {}).get("engine")) for j in listed) == [
                ("harbour.mp4", "openai"), ("harbour.mp4", "rapidocr")]
    finally:
        fake.close()


@pytest.mark.parametrize(("body", "says"), [
    ({"engine": "nope"}, "unknown engine 'nope'"),
    ({"engine": "rapidocr", "profile": "hunyuanocr-1.5"}, "engine 'rapidocr' takes no profile"),
    ({"engine": "openai", "profile": "hunyuanocr-9"}, "unknown model profile 'hunyuanocr-9'"),
    ({"engine": "openai", "profile": "../../etc/x"}, "profile must be the name of a bundled profile"),
    ({"engine": "openai", "server": ["file:///etc/passwd"]}, "server must be an http:// or https:// base URL"),
    ({"engine": "rapidocr", "server": ["http://127.0.0.1:1/v1"]}, "engine 'rapidocr' takes no server URL"),
    ({"engine": "openai", "options": {"api_key": "x"}}, "engine option 'api_key' cannot be set by a job"),
    ({"engine": "openai", "options": {"retires": 2}}, "engine 'openai' has no setting 'retires'"),
    ({"engine": "openai", "options": {"retries": "many"}}, "retries"),
    ({"profile": "hunyuanocr-1.5"}, "go with an engine"),
])
def test_a_job_naming_an_unknown_engine_or_setting_is_one_line(own_library: Library, body: dict[str, Any],
                                                                says: str) -> None:
    with TestClient(create_app(own_library.settings())) as client:
        r = client.post("/api/v1/jobs", json={"path": "harbour.mp4", **body})
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        assert says in error and "\n" not in error and "Traceback" not in error
        assert client.get("/api/v1/jobs").json()["jobs"] == []  # nothing was queued


def test_a_job_run_by_a_watch_daemon_shows_its_progress(own_library: Library, tmp_path: Path) -> None:
    """The worker writes progress to the queue: the server reports it for a job another process runs."""
    import threading

    from vidocr.daemon import WatchOptions
    from vidocr.daemon.service import WatchService
    from vidocr.pipeline import Progress
    from vidocr.types import Cue, VideoInfo

    halfway, release = threading.Event(), threading.Event()

    def slow(path: Path, progress: Any = None) -> tuple[Iterator[Cue], VideoInfo]:
        def cues() -> Iterator[Cue]:
            progress(Progress(str(path), 2.0, 5.0, 50, 2, 0))
            halfway.set()
            release.wait(30)
            yield Cue(100, 900, "read by the watch daemon")
        return cues(), VideoInfo(str(path), 480, 270, 5.0, 25.0, "h264")

    settings = own_library.settings()  # this server only queues jobs
    empty = tmp_path / "watched"
    empty.mkdir()
    watch = WatchService(WatchOptions(roots=(empty,), jobs_db=settings.queue_path, db=own_library.db, once=True,
                                      settle_s=0.0, tick_s=0.02), extractor=slow)
    with TestClient(create_app(settings)) as client:
        job = client.post("/api/v1/jobs", json={"path": "harbour.mp4"}).json()["job"]
        assert job["progress"] == 0.0
        runner = threading.Thread(target=watch.run)
        runner.start()
        try:
            assert halfway.wait(30)
            running = _wait_job(client, job["id"], states=("running",), timeout=10)
            seen = running["progress"]
            deadline = time.monotonic() + 10
            while seen != 0.4 and time.monotonic() < deadline:
                time.sleep(0.05)
                seen = client.get(f"/api/v1/jobs/{job['id']}").json()["progress"]
            assert running["state"] == "running" and seen == 0.4
        finally:
            release.set()
            runner.join(30)
        done = client.get(f"/api/v1/jobs/{job['id']}").json()
        assert done["state"] == "done" and done["progress"] == 1.0
