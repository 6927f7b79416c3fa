"""The web page in a real headless Chromium (Playwright driving Debian's ``chromium``) against `vidocr serve` on a
real port: search, click a hit, the video plays at the cue, the cue list follows, proofread a cue (edit its text,
shift its end by a frame), export, and read the exported SRT back from beside the video."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("fastapi")
pytest_plugins = ["support.serve_fixtures"]

from support.net import free_port  # noqa: E402
from support.synth import read_srt  # noqa: E402

if TYPE_CHECKING:
    from support.serve_fixtures import Library

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FRAME_MS = 40


@pytest.fixture(scope="module")
def server(serve_library: Library, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Library]]:
    """uvicorn on a free loopback port over a copy of the library (the test edits and exports)."""
    import uvicorn

    from vidocr.serve.app import create_app

    base = tmp_path_factory.mktemp("browser")
    root = base / "library"
    shutil.copytree(serve_library.root, root)
    db = base / "index.sqlite"
    from support.synth import SynthCue, SynthSpec, render_video

    from vidocr.extractor import Extractor
    from vidocr.index import BuildOptions, build_index

    # a Matroska file: browsers do not play the container, the page must say so and give the mpv line
    render_video(SynthSpec(width=320, height=180, duration=2.0, font_size=18, cut_every=None, container="mkv",
                           cues=(SynthCue(0.4, 1.6, "Matroska night"),)), root / "night.mkv")

    with Extractor() as extractor:
        build_index(db, [root], BuildOptions(extract=extractor, lang="en"))
    library = type(serve_library)(root, db, serve_library.truth, serve_library.outside)
    port = free_port()
    app = create_app(library.settings(port=port))
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, access_log=False, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}", library
    srv.should_exit = True
    thread.join(15)


@pytest.fixture(scope="module")
def page(server: tuple[str, Library]) -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (scripts/install_test_extras.py installs it as root)")
    from playwright.sync_api import sync_playwright  # the test extra: a missing one fails, it does not skip

    with sync_playwright() as p:
        args = ["--no-sandbox", "--autoplay-policy=no-user-gesture-required"]
        browser = p.chromium.launch(executable_path=CHROMIUM, args=args)
        try:
            pg = browser.new_page()
            errors: list[str] = []
            pg.on("pageerror", lambda exc: errors.append(str(exc)))
            pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            pg.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
            pg.errors = errors
            yield pg
        finally:
            browser.close()


def test_search_play_proofread_and_export(server: tuple[str, Library], page: Any) -> None:
    url, library = server
    truth = {t.text: t for t in library.truth["harbour.mp4"]}
    page.goto(url + "/")
    page.fill("#q", "harbour")
    page.press("#q", "Enter")
    hit = page.locator(".hit", has_text="Bring the boat")
    hit.wait_for(timeout=10_000)
    assert hit.locator("mark").inner_text().lower() == "harbour"
    page.wait_for_function("() => [...document.querySelectorAll('.hit img')].every(i => i.complete && "
                           "i.naturalWidth > 0)", timeout=10_000)
    cue = truth["Bring the boat to the harbour"]
    hit.click()
    page.wait_for_function("() => { const v = document.querySelector('#video'); return v.readyState >= 2 && "
                           "!v.seeking && v.currentTime > 0; }", timeout=15_000)
    at = page.evaluate("document.querySelector('#video').currentTime") * 1000
    assert cue.start_ms - 1 <= at <= cue.start_ms + 600, at  # at the cue (it may have played on a little)
    page.evaluate("() => { const v = document.querySelector('#video'); v.pause(); v.currentTime = %f; }"
                  % ((cue.start_ms + 300) / 1000))
    page.wait_for_function("() => document.querySelector('#cue-list li.active') !== null", timeout=10_000)
    assert "Bring the boat" in page.locator("#cue-list li.active").inner_text()
    assert page.locator("#cannot-play").is_hidden()
    assert page.locator("#results").is_hidden() and page.locator("#proof-view").is_hidden()  # one view at a time

    page.click("#proof-link")
    rows = page.locator("#proof-list li")
    rows.first.wait_for(timeout=10_000)
    assert rows.count() == 3
    assert page.locator("#player-view").is_hidden() and page.locator("#results").is_hidden()
    index = page.evaluate("[...document.querySelectorAll('#proof-list textarea')].findIndex("
                          "t => t.value.startsWith('Bring'))")
    row = rows.nth(index)
    start, before = page.evaluate("(() => { const c = state.proof.find(c => c.text.startsWith('Bring'));"
                                  " return [c.start_ms, c.end_ms]; })()")
    text = row.locator("textarea")
    text.fill("Bring the boat to the lighthouse")
    row.get_by_role("button", name="end +1f").click()
    page.click("#save")
    page.wait_for_function("() => document.querySelector('#status').textContent.startsWith('saved')", timeout=10_000)
    page.click("[data-export=srt]")
    page.wait_for_function("() => document.querySelector('#status').textContent.startsWith('exported')",
                           timeout=10_000)
    written = read_srt(library.root / "harbour.srt")
    edited = [c for c in written if c.text == "Bring the boat to the lighthouse"]
    assert len(edited) == 1 and edited[0].start_ms == start
    assert edited[0].end_ms == before + FRAME_MS
    assert [c.text for c in written] == ["The lighthouse keeper waved", "Bring the boat to the lighthouse",
                                         "Nobody saw the lighthouse"]

    # A/B: the edit (shown now) against the extraction it was made from; keep the extraction's line, save
    page.select_option("#rev-a", "0")
    page.click("#compare")
    row = page.locator("#ab-table tbody tr", has_text="Bring the boat")
    row.first.wait_for(timeout=10_000)
    assert row.count() == 1 and page.locator("#ab-table tbody tr").count() == 3
    assert row.locator("td[data-side=a] mark").all_inner_texts() == ["lighthouse"]
    assert row.locator("td[data-side=b] mark").all_inner_texts() == ["harbour"]
    row.locator("td[data-side=b]").click()
    page.click("#ab-save")
    page.wait_for_function("() => document.querySelector('#status').textContent.startsWith('saved')", timeout=10_000)
    cues = json.loads(page.evaluate("fetch('/api/v1/videos/' + location.hash.split('/')[2].split('?')[0] + '/cues')"
                                    ".then(r => r.text())"))["cues"]
    assert [c["text"] for c in cues] == [t.text for t in library.truth["harbour.mp4"]]
    assert not page.errors, page.errors


def test_a_video_the_browser_cannot_play_gets_the_mpv_line(page: Any) -> None:
    page.evaluate("location.hash = '#/?q=matroska'")
    hit = page.locator(".hit", has_text="Matroska night")
    hit.wait_for(timeout=10_000)
    hit.click()
    message = page.locator("#cannot-play")
    message.wait_for(state="visible", timeout=10_000)
    text = message.inner_text()
    assert "cannot play" in text and "night.mkv" in text and "mpv --start=" in text
    start = page.evaluate("+new URLSearchParams(location.hash.split('?')[1]).get('t')")
    clock = f"00:00:{start // 1000:02d}.{start % 1000:03d}"
    assert page.locator("#mpv-line").inner_text().startswith(f"mpv --start={clock} ")
    assert f"mpv --start={clock} " in text
    assert page.evaluate("document.querySelector('#video').getAttribute('src')") is None


def test_proofreading_keys_nudge_merge_and_order(server: tuple[str, Library], page: Any) -> None:
    url, library = server
    vid = page.evaluate("fetch('/api/v1/videos').then(r => r.json()).then(d => d.videos.find("
                        "v => v.path === 'sub/forest.mp4').id)")
    before = page.evaluate(f"fetch('/api/v1/videos/{vid}/cues').then(r => r.json())")["cues"]
    page.evaluate(f"location.hash = '#/proof/{vid}'")
    page.wait_for_function("() => document.querySelector('#proof-title').textContent === 'sub/forest.mp4' && "
                           "document.querySelectorAll('#proof-list li').length === 2", timeout=10_000)
    confidences = page.evaluate("[...document.querySelectorAll('#proof-list li')].map("
                                "li => state.proof[+li.dataset.index].confidence)")
    assert confidences == sorted(confidences)  # least confident first
    page.check("#by-time")
    first = page.locator("#proof-list li").first
    first.locator("textarea").focus()
    end = page.evaluate("state.proof[state.selected].end_ms")
    page.keyboard.press("Alt+Period")
    assert page.evaluate("state.proof[state.selected].end_ms") == end + FRAME_MS
    page.keyboard.press("Alt+Comma")
    page.keyboard.press("Alt+Comma")
    assert page.evaluate("state.proof[state.selected].end_ms") == end - FRAME_MS
    start = page.evaluate("state.proof[state.selected].start_ms")
    page.keyboard.press("Alt+BracketRight")
    assert page.evaluate("state.proof[state.selected].start_ms") == start + FRAME_MS
    page.keyboard.press("Alt+KeyM")  # merge with the next cue
    assert page.evaluate("state.proof.length") == 1
    assert page.evaluate("state.proof[0].text") == "\n".join(c["text"] for c in before)
    assert page.evaluate("document.body.classList.contains('dirty')")
    page.keyboard.press("Control+KeyS")
    page.wait_for_function("() => document.querySelector('#status').textContent.startsWith('saved')", timeout=10_000)
    cues = page.evaluate(f"fetch('/api/v1/videos/{vid}/cues').then(r => r.json())")["cues"]
    assert [(c["start_ms"], c["end_ms"]) for c in cues] == [(before[0]["start_ms"] + FRAME_MS, before[1]["end_ms"])]


def test_jobs_page_uploads_queues_and_cancels(server: tuple[str, Library], page: Any, tmp_path: Path) -> None:
    url, library = server
    page.click("a.nav")
    page.locator("#jobs-view").wait_for(timeout=10_000)
    page.set_input_files("#upload", str(library.root / "harbour.mp4"))
    row = page.locator("#jobs-table tbody tr", has_text="harbour.mp4")
    row.wait_for(timeout=20_000)
    assert row.locator(".state").inner_text() == "pending"  # this server runs no worker
    row.get_by_role("button", name="cancel").click()
    page.wait_for_function("() => [...document.querySelectorAll('#jobs-table .error')].some("
                           "td => td.textContent === 'cancelled')", timeout=10_000)
    notes = tmp_path / "notes.mp4"
    notes.write_text("not a video\n" * 20)
    page.set_input_files("#upload", str(notes))
    page.wait_for_function("() => document.querySelector('#status').textContent.startsWith('not queued')",
                           timeout=10_000)
    assert "notes.mp4" in page.locator("#status").inner_text()
    page.fill("#job-path", "../private/secret.mp4")
    page.press("#job-path", "Enter")
    page.wait_for_function("() => document.querySelector('#status').textContent.includes('..')", timeout=10_000)
    assert page.locator("#status").inner_text().startswith("not queued")
    # a job naming its engine (A/B): an unknown one is refused in one line, a known one is a job of its own
    page.fill("#job-engine", "nope")
    page.fill("#job-path", "harbour.mp4")
    page.press("#job-path", "Enter")
    page.wait_for_function("() => document.querySelector('#status').textContent.includes('unknown engine')",
                           timeout=10_000)
    assert page.locator("#status").inner_text().startswith("not queued")
    page.fill("#job-engine", "rapidocr")
    page.press("#job-path", "Enter")
    row = page.locator("#jobs-table tbody tr", has=page.locator("td.engine", has_text="rapidocr"))
    row.wait_for(timeout=10_000)
    assert row.locator(".state").inner_text() == "pending" and "harbour.mp4" in row.inner_text()
    row.get_by_role("button", name="cancel").click()
    page.wait_for_function("() => [...document.querySelectorAll('#jobs-table tr')].some(tr => tr.querySelector("
                           "'td.engine')?.textContent === 'rapidocr' && tr.querySelector('.error')?.textContent"
                           " === 'cancelled')", timeout=10_000)


def test_with_keys_the_page_asks_for_one_and_sends_it_as_a_header(server: tuple[str, Library], page: Any) -> None:
    # last in this module: from here on the module's server requires keys
    from vidocr.index.db import open_index
    from vidocr.serve.auth import create_key

    url, library = server
    conn = open_index(library.db)
    try:
        _, key = create_key(conn, "browser", "read")
    finally:
        conn.close()
    time.sleep(1.1)  # the server looks for new keys every second
    page.goto(url + "/#/?q=forest")
    page.wait_for_function("() => document.querySelector('#key-box').open", timeout=10_000)
    assert "API key is required" in page.locator("#status").inner_text()
    page.fill("#key", key)
    page.press("#key", "Enter")
    page.locator(".hit", has_text="forest").first.wait_for(timeout=10_000)
    page.wait_for_function("() => [...document.querySelectorAll('.hit img')].every(i => i.complete && "
                           "i.naturalWidth > 0)", timeout=10_000)  # band images through media tokens
    assert page.evaluate("document.cookie") == "" and page.context.cookies() == []
    assert page.evaluate("sessionStorage.getItem('vidocr-key')") == key
