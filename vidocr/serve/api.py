"""``/api/v1``: search, videos and their cues, subtitles in every format, band images, video streams (HTTP Range),
proofreading edits and exports, and jobs on the daemon's queue (a library path or an upload).

Videos are named by their index id; a path in a request is relative to a library root (:mod:`vidocr.serve.paths`).
Read routes take any key, writing routes (jobs, edits, exports) a full one.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, JSONResponse, Response
from pydantic import BaseModel, Field

from vidocr.errors import InputError, VidocrError, as_text
from vidocr.files import Stamp, output_stem
from vidocr.formats import WRITERS, get_writer
from vidocr.index import revisions
from vidocr.index.db import fs_text
from vidocr.index.revisions import CueRow
from vidocr.index.search import SearchOptions, search
from vidocr.serve.app import ApiError, ServeState
from vidocr.serve.media import Probe, probe
from vidocr.serve.paths import check_served, relative, resolve_request_path
from vidocr.types import Box, Cue, VideoInfo

router = APIRouter()
#: An id in a URL: an SQLite integer (a larger one is a 422, never an overflow).
Id = Annotated[int, PathParam(ge=0, le=2**63 - 1)]
_GLOB_SPECIAL = re.compile(r"([*?\[])")
#: The most hits one page of search results may reach (offset + limit).
MAX_RESULTS = 1000


def _state(request: Request) -> ServeState:
    state: ServeState = request.app.state.vidocr
    return state


# --- models ---------------------------------------------------------------------------------------------------


class CueIn(BaseModel):
    start_ms: int = Field(ge=0, le=2**40)
    end_ms: int = Field(ge=1, le=2**40)
    text: str = Field(min_length=1, max_length=10_000)
    confidence: float | None = None
    box: list[int] | None = Field(default=None, min_length=4, max_length=4)


class EditIn(BaseModel):
    cues: list[CueIn] = Field(max_length=100_000)
    base_revision: int | None = Field(default=None, description="the edit revision the page started from")


class ExportIn(BaseModel):
    format: str = Field(default="srt", description="srt, vtt, ass or json")


class JobIn(BaseModel):
    path: str = Field(min_length=1, max_length=4096, description="a video's path relative to a library root")
    root: int | None = Field(default=None, ge=0, description="which root (0-based); default: the first that has it")
    engine: str | None = Field(default=None, max_length=100, description=(
        "the OCR engine (as `--engine`: rapidocr, openai, hunyuan-vllm...); default: the server's extract options."
        " A job naming an engine is a job of its own (one file, two engines: two jobs), kept as an OCR revision"
        " for the A/B view; it writes no subtitle file beside the video"))
    profile: str | None = Field(default=None, max_length=100, description="a bundled model profile (hunyuan-*, "
                                "openai): hunyuanocr-1.0, hunyuanocr-1.5")
    model: str | None = Field(default=None, max_length=200, description="the served model's name (openai)")
    server: list[str] | None = Field(default=None, max_length=16, description="OpenAI-compatible base URLs (openai)")
    options: dict[str, str | int | float | bool] | None = Field(
        default=None, max_length=32, description="engine settings, as `--engine-opt KEY=VALUE`")


# --- helpers --------------------------------------------------------------------------------------------------


def _video_row(state: ServeState, video_id: int) -> tuple[Any, ...]:
    row = state.index().execute(
        "SELECT id, path, size, mtime_ns, status, error, engine, duration_s, indexed_at FROM videos WHERE id = ?",
        (video_id,),
    ).fetchone()
    if row is None:
        raise ApiError(404, f"no video {video_id} in the index")
    return tuple(row)


def _video_file(state: ServeState, video_id: int) -> tuple[tuple[Any, ...], Path]:
    row = _video_row(state, video_id)
    real, _ = check_served(row[1], state.roots)
    if not real.is_file():
        raise ApiError(404, f"video {video_id} is gone from the disk: {os.path.basename(row[1])}")
    return row, real


def _probe(state: ServeState, real: Path) -> Probe:
    st = real.stat()
    key = (str(real), st.st_size, st.st_mtime_ns)
    found = state.probes.get(key)
    if found is None:
        found = state.probes[key] = probe(real)
        if len(state.probes) > 4096:
            state.probes.clear()
    return found


def _where(state: ServeState, path: str) -> dict[str, Any]:
    rel = relative(path, state.roots)
    if rel is None:
        return {"root": None, "path": os.path.basename(as_text(path))}
    return {"root": rel[0], "path": as_text(rel[1])}


def _play_command(path: str, ms: int) -> str:
    """The mpv line the CLI's search prints (a name that is not printable in bash's ``$'...'`` quoting)."""
    hours, rest = divmod(max(ms, 0), 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    at = f"{hours:02d}:{minutes:02d}:{rest // 1000:02d}.{rest % 1000:03d}"
    if path.isprintable():
        return f"mpv --start={at} {shlex.quote(path)}"
    quoted = "".join(f"\\x{b:02x}" if b < 0x20 or b >= 0x7F or b in b"'\\" else chr(b) for b in os.fsencode(path))
    return f"mpv --start={at} $'{quoted}'"


def _cues(state: ServeState, video_id: int) -> list[CueRow]:
    return revisions.current_cues(state.index(), video_id)


def _as_cues(rows: list[CueRow]) -> list[Cue]:
    return [Cue(r.start_ms, r.end_ms, r.text, r.confidence if r.confidence is not None else 1.0,
                Box(*r.box) if r.box else None) for r in rows]


def _info(path: str, p: Probe | None, duration: float | None) -> VideoInfo:
    if p is None:
        return VideoInfo(path, 0, 0, duration, None, "")
    return VideoInfo(path, p.width, p.height, p.duration_s or duration, p.fps, p.codec)


def _job_doc(state: ServeState, job: Any) -> dict[str, Any]:
    from vidocr.daemon.choice import EngineChoice

    doc = {"id": job.id, "state": job.state, "attempts": job.attempts, "error": job.error, "cues": job.cues,
           "seconds": job.seconds, "created_at": job.created_at, "updated_at": job.updated_at,
           **_where(state, job.path)}
    try:
        choice = EngineChoice.from_key(job.engine)
    except VidocrError:
        choice = None
    doc["engine"] = choice.to_dict() if choice else None
    # Written to the queue by whichever worker runs the job (this server's or a `vidocr watch`).
    doc["progress"] = 1.0 if job.state == "done" else job.progress if job.progress is not None else 0.0
    row = state.index().execute("SELECT id FROM videos WHERE path = CAST(? AS TEXT)", (fs_text(job.path),)).fetchone()
    doc["video_id"] = row[0] if row else None
    return doc


def _queue(state: ServeState) -> Any:
    from vidocr.daemon.jobs import JobQueue

    return JobQueue(state.settings.queue_path)


def _choice(body: JobIn, state: ServeState) -> str:
    """The queue key of the engine the job names ('' when it names none); an unknown engine, profile or setting
    is a 422 of one line."""
    from vidocr.daemon.choice import EngineChoice

    if body.engine is None:
        if body.profile or body.model or body.server or body.options:
            raise ApiError(422, "profile, model, server and options go with an engine: name the engine too")
        return ""
    try:
        choice = EngineChoice.of(body.engine, body.profile, body.model, body.server, body.options)
        choice.check(state.settings.extract)
    except VidocrError as err:
        raise ApiError(422, str(err)) from None
    return choice.key()


def _enqueue(state: ServeState, real: Path, root: Path, engine: str = "") -> JSONResponse:
    st = real.stat()
    probe(real, decode=True)  # not a video: 422 naming the file, before anything is queued
    queue = _queue(state)
    try:
        outcome = queue.enqueue(str(real), Stamp.of(st), str(root), engine)
        job = queue.get(str(real), engine)
        if outcome == "known" and job is not None and job.state == "failed":
            queue.retry(job.id)  # submitting a failed (or cancelled) job again runs it again, with fresh attempts
            outcome, job = "retried", queue.by_id(job.id)
    finally:
        queue.close()
    state.worker.wake()
    assert job is not None
    doc = {"queued": outcome, "job": _job_doc(state, job)}
    return JSONResponse(doc, status_code=200 if outcome == "known" else 202)


# --- search ---------------------------------------------------------------------------------------------------


@router.get("/search", summary="Search cue text (the index's query language: OR, -word, NEAR, \"phrases\", prefix*)")
def search_cues(
    request: Request,
    q: str = Query(min_length=1, max_length=1000),
    limit: int = Query(20, ge=1, le=200),
    offset: int = Query(0, ge=0, le=MAX_RESULTS),
    folder: str | None = Query(None, max_length=4096, description="a folder relative to a library root"),
    root: int | None = Query(None, ge=0),
    lang: str | None = Query(None, max_length=35),
    modified_after: float | None = Query(None, ge=0, le=9e9, description="Unix seconds: videos modified at or after"),
    modified_before: float | None = Query(None, ge=0, le=9e9, description="Unix seconds: videos modified before"),
) -> JSONResponse:
    state = _state(request)
    principal = state.authenticate(request, "read")
    video_glob = None
    if folder:
        real, _ = resolve_request_path(folder, state.roots, root)
        video_glob = _GLOB_SPECIAL.sub(r"[\1]", str(real)).rstrip(os.sep) + os.sep + "*"
    elif root is not None:
        if root >= len(state.roots):
            raise ApiError(400, f"no library root number {root}")
        video_glob = _GLOB_SPECIAL.sub(r"[\1]", str(state.roots[root])).rstrip(os.sep) + os.sep + "*"
    wanted = min(MAX_RESULTS, offset + limit)
    options = SearchOptions(limit=wanted + 1, video=video_glob, lang=lang, marks=("", ""),
                            modified_after=modified_after, modified_before=modified_before,
                            rank_window=state.settings.rank_window)
    if "\x00" in q:
        raise ApiError(400, "the query holds a NUL character")
    result = search(state.index(), q, options)
    page = result.hits[offset:wanted]
    videos: dict[str, tuple[dict[str, Any], int | None, str | None]] = {}  # per video: where, id, media token
    hits = []
    for hit in page:
        if hit.video not in videos:
            vid = hit.video_id
            token = state.tokens.make(vid, principal.key_id) if vid is not None else None
            rel = state.folders.relative(hit.video)
            where = {"root": rel[0], "path": as_text(rel[1])} if rel else {"root": None, "path": ""}
            videos[hit.video] = (where, vid, token)
        where, vid, token = videos[hit.video]
        if where["root"] is None:
            continue  # a video of the index outside the served roots is never shown
        doc = hit.to_dict()
        del doc["highlighted"], doc["video"]
        doc.update(where, video_id=vid, cue_id=hit.cue_id, mpv=_play_command(hit.video, hit.start_ms),
                   media_token=token)
        if doc["track"]["sidecar"]:
            doc["track"]["sidecar"] = os.path.basename(doc["track"]["sidecar"])
        hits.append(doc)
    # A JSONResponse skips FastAPI's recursive encoder (these are plain JSON types): ~1.5 ms of a 20-hit page.
    return JSONResponse({"query": q, "match": result.match, "offset": offset, "limit": limit, "hits": hits,
                         "more": len(result.hits) > wanted, "windowed": result.windowed,
                         "seconds": round(result.seconds, 4)})


# --- videos ---------------------------------------------------------------------------------------------------


@router.get("/videos", summary="Indexed videos under the library roots")
def list_videos(
    request: Request, offset: int = Query(0, ge=0, le=2**40), limit: int = Query(100, ge=1, le=1000)
) -> dict[str, Any]:
    state = _state(request)
    state.authenticate(request, "read")
    rows = state.index().execute(
        "SELECT v.id, v.path, v.status, v.duration_s, (SELECT count(*) FROM tracks t JOIN cues c ON c.track_id = t.id"
        " WHERE t.video_id = v.id AND t.source = 'ocr' AND t.kind = 'original') FROM videos v ORDER BY v.path"
        " LIMIT ? OFFSET ?", (limit, offset)).fetchall()
    videos = [{"id": r[0], **_where(state, r[1]), "status": r[2], "duration_s": r[3], "cues": r[4]} for r in rows]
    return {"videos": [v for v in videos if v["root"] is not None], "offset": offset, "limit": limit}


@router.get("/videos/{video_id}", summary="A video's metadata, how to play it, and its revision state")
def video_meta(request: Request, video_id: Id) -> dict[str, Any]:
    state = _state(request)
    principal = state.authenticate(request, "read")
    row, real = _video_file(state, video_id)
    p = _probe(state, real)
    st = revisions.state(state.index(), video_id)
    return {"id": row[0], **_where(state, row[1]), "name": os.path.basename(as_text(row[1])), "size": row[2],
            "mtime": row[3] / 1e9, "status": row[4], "error": row[5], "engine": row[6], "duration_s": row[7],
            "indexed_at": row[8], "probe": p.to_dict(), "mpv": _play_command(row[1], 0),
            "media_token": state.tokens.make(video_id, principal.key_id),
            "revisions": {"edited": st.edited, "ocr_is_newer": st.ocr_is_newer, "latest_edit": st.latest_edit,
                          "latest_ocr": st.latest_ocr, "count": st.count}}


@router.get("/videos/{video_id}/cues", summary="The video's cues (the latest edit, else the latest extraction)")
def video_cues(request: Request, video_id: Id) -> dict[str, Any]:
    state = _state(request)
    state.authenticate(request, "read")
    _video_row(state, video_id)
    st = revisions.state(state.index(), video_id)
    return {"video_id": video_id, "cues": [c.to_dict() for c in _cues(state, video_id)],
            "latest_edit": st.latest_edit, "ocr_is_newer": st.ocr_is_newer}


@router.get("/videos/{video_id}/subtitles.{fmt}", summary="The video's cues as SRT, VTT, ASS or JSON")
def video_subtitles(request: Request, video_id: Id, fmt: str, download: bool = False) -> Response:
    state = _state(request)
    state.authenticate(request, "read")
    if fmt not in WRITERS:
        raise ApiError(404, f"unknown subtitle format {fmt!r}; choose from: {', '.join(sorted(WRITERS))}")
    row, real = _video_file(state, video_id)
    text = get_writer(fmt).render(_as_cues(_cues(state, video_id)), _info(str(real), _probe(state, real), row[7]))
    media = {"srt": "application/x-subrip", "vtt": "text/vtt", "ass": "text/x-ssa", "json": "application/json"}[fmt]
    headers = {}
    if download:
        name = f"{output_stem(real)}.{get_writer(fmt).extension}"
        safe = name.encode("ascii", "replace").decode().replace('"', "_")
        headers["Content-Disposition"] = f'attachment; filename="{safe}"'
    return Response(text, media_type=f"{media}; charset=utf-8", headers=headers)


@router.get("/videos/{video_id}/band", summary="The subtitle band of the frame at ms, as JPEG or PNG",
            response_class=Response)
def video_band(
    request: Request, video_id: Id, ms: int = Query(ge=0, le=2**40), fmt: str = Query("jpeg", pattern="^(jpeg|png)$"),
    y: int | None = Query(None, ge=0, le=100_000), h: int | None = Query(None, ge=1, le=100_000),
) -> Response:
    state = _state(request)
    state.authenticate(request, "read", video_id)
    row, real = _video_file(state, video_id)
    duration = _probe(state, real).duration_s
    if duration is not None and ms > duration * 1000:
        raise ApiError(422, f"{ms} ms is past the end of video {video_id} ({duration * 1000:.0f} ms)")
    box = (0, y, 0, h) if y is not None and h is not None else None
    data = state.bands.get(real, (row[2], row[3]), ms, box, fmt)
    return Response(data, media_type=f"image/{fmt}", headers={"Cache-Control": "private, max-age=3600"})


@router.get("/cues/{cue_id}/band", summary="A cue's band image at its middle frame", response_class=Response)
def cue_band(request: Request, cue_id: Id, fmt: str = Query("jpeg", pattern="^(jpeg|png)$")) -> Response:
    state = _state(request)
    row = state.index().execute(
        "SELECT t.video_id, c.start_ms, c.end_ms, c.box FROM cues c JOIN tracks t ON t.id = c.track_id WHERE c.id = ?",
        (cue_id,),
    ).fetchone()
    if row is None:
        state.authenticate(request, "read")
        raise ApiError(404, f"no cue {cue_id}")
    state.authenticate(request, "read", int(row[0]))
    vrow, real = _video_file(state, int(row[0]))
    box = revisions._box(row[3])
    data = state.bands.get(real, (vrow[2], vrow[3]), (row[1] + row[2]) // 2, box, fmt)
    return Response(data, media_type=f"image/{fmt}", headers={"Cache-Control": "private, max-age=3600"})


@router.get("/videos/{video_id}/stream", summary="The video file (HTTP Range requests: 206 / 416)",
            response_class=Response)
def video_stream(request: Request, video_id: Id) -> Response:
    state = _state(request)
    state.authenticate(request, "read", video_id)
    _, real = _video_file(state, video_id)
    p = _probe(state, real)
    size = real.stat().st_size
    header = request.headers.get("range")
    if header is not None:
        try:
            FileResponse._parse_range_header(header, size)
        except Exception:  # noqa: BLE001 - starlette's MalformedRangeHeader / RangeNotSatisfiable
            raise ApiError(416, f"range not satisfiable (the file has {size} bytes)",
                           {"Content-Range": f"bytes */{size}"}) from None
    return FileResponse(str(real), media_type=p.mime, content_disposition_type="inline",
                        headers={"Cache-Control": "private, max-age=0"})


# --- proofreading ---------------------------------------------------------------------------------------------


@router.put("/videos/{video_id}/cues", summary="Save the user's cues as a new revision (the OCR output is kept)")
def save_cues(request: Request, video_id: Id, body: EditIn) -> dict[str, Any]:
    state = _state(request)
    principal = state.authenticate(request, "full")
    _video_row(state, video_id)
    st = revisions.state(state.index(), video_id)
    if body.base_revision is not None and st.latest_edit is not None and body.base_revision != st.latest_edit:
        raise ApiError(409, f"the cues were edited meanwhile (revision {st.latest_edit}); reload before saving")
    rows = [CueRow(c.start_ms, c.end_ms, c.text.replace("\r\n", "\n"), c.confidence,
                   tuple(c.box) if c.box else None) for c in body.cues]  # type: ignore[arg-type]
    try:
        revision = revisions.save_edit(state.index(), video_id, rows, principal.name)
    except ValueError as err:
        raise ApiError(422, str(err)) from None
    return {"video_id": video_id, "revision": revision, "cues": [c.to_dict() for c in _cues(state, video_id)]}


@router.get("/videos/{video_id}/revisions", summary="The video's revisions (OCR outputs and edits)")
def list_revisions(request: Request, video_id: Id) -> dict[str, Any]:
    state = _state(request)
    state.authenticate(request, "read")
    _video_row(state, video_id)
    return {"video_id": video_id, "revisions": revisions.list_revisions(state.index(), video_id)}


@router.get("/videos/{video_id}/revisions/{revision_id}", summary="One revision's cues")
def get_revision(request: Request, video_id: Id, revision_id: Id) -> dict[str, Any]:
    state = _state(request)
    state.authenticate(request, "read")
    cues = revisions.revision_cues(state.index(), video_id, revision_id)
    if cues is None:
        raise ApiError(404, f"no revision {revision_id} of video {video_id}")
    return {"video_id": video_id, "revision": revision_id, "cues": [c.to_dict() for c in cues]}


@router.get("/videos/{video_id}/compare", summary="Two versions of the cues side by side (A/B), paired by time")
def compare(
    request: Request, video_id: Id,
    a: int = Query(ge=0, le=2**63 - 1, description="a revision id (0: the cues shown now)"),
    b: int = Query(ge=0, le=2**63 - 1, description="a revision id (0: the cues shown now)"),
) -> dict[str, Any]:
    state = _state(request)
    state.authenticate(request, "read")
    _video_row(state, video_id)

    def version(rid: int) -> list[CueRow]:
        if rid == 0:
            return _cues(state, video_id)
        cues = revisions.revision_cues(state.index(), video_id, rid)
        if cues is None:
            raise ApiError(404, f"no revision {rid} of video {video_id}")
        return cues

    pairs = revisions.align(version(a), version(b))
    return {"video_id": video_id, "a": a, "b": b, "pairs": [
        {"a": x.to_dict() if x else None, "b": y.to_dict() if y else None,
         "same": x is not None and y is not None and (x.start_ms, x.end_ms, x.text) == (y.start_ms, y.end_ms, y.text)}
        for x, y in pairs]}


@router.post("/videos/{video_id}/export", summary="Write the cues beside the video, atomically")
def export(request: Request, video_id: Id, body: ExportIn) -> dict[str, Any]:
    from vidocr.atomic import write_text_atomic

    state = _state(request)
    state.authenticate(request, "full")
    if body.format not in WRITERS:
        raise ApiError(422, f"unknown subtitle format {body.format!r}; choose from: {', '.join(sorted(WRITERS))}")
    row, real = _video_file(state, video_id)
    writer = get_writer(body.format)
    text = writer.render(_as_cues(_cues(state, video_id)), _info(str(real), _probe(state, real), row[7]))
    target = real.parent / f"{output_stem(real)}.{writer.extension}"
    check_served(str(target.parent), state.roots)
    written = write_text_atomic(target, text)
    return {"video_id": video_id, "format": body.format, **_where(state, str(written)), "bytes": len(text.encode())}


# --- jobs -----------------------------------------------------------------------------------------------------


@router.post("/jobs", status_code=202, summary="Queue a video under a library root for extraction")
def submit_job(request: Request, body: JobIn) -> JSONResponse:
    state = _state(request)
    state.authenticate(request, "full")
    engine = _choice(body, state)
    real, root = resolve_request_path(body.path, state.roots, body.root)
    if not real.is_file():
        raise InputError("not a file", body.path)
    return _enqueue(state, real, root, engine)


_SAFE_NAME = re.compile(r"[^\w.\- ]+")


@router.post("/uploads", status_code=202, summary="Upload a video (the raw request body) and queue it",
             openapi_extra={"requestBody": {"content": {"application/octet-stream": {"schema": {
                 "type": "string", "format": "binary"}}}, "required": True}})
async def upload(
    request: Request, filename: str = Query(min_length=1, max_length=200),
    engine: str | None = Query(None, max_length=100, description="as in POST /jobs: a job of its own (A/B)"),
    profile: str | None = Query(None, max_length=100), model: str | None = Query(None, max_length=200),
    server: Annotated[list[str] | None, Query(max_length=16)] = None,
) -> JSONResponse:
    import asyncio

    state = _state(request)
    state.authenticate(request, "full")
    choice = _choice(JobIn(path=filename, engine=engine, profile=profile, model=model, server=server), state)
    limit = state.settings.max_upload_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"upload too large: {int(declared)} bytes, the limit is {limit}")
    name = _SAFE_NAME.sub("_", os.path.basename(filename.replace("\\", "/"))).strip(" .") or "upload"
    folder = state.settings.uploads / secrets.token_hex(8)
    folder.mkdir(parents=True)
    target = folder / name
    size = 0
    try:
        with open(target, "wb") as out:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise ApiError(413, f"upload too large: over {limit} bytes")
                out.write(chunk)
        if size == 0:
            raise ApiError(422, f"{name}: empty upload")
        real = Path(os.path.realpath(target))
        await asyncio.to_thread(probe, real, decode=True)
    except BaseException:
        target.unlink(missing_ok=True)
        folder.rmdir()
        raise
    return await asyncio.to_thread(_enqueue, state, real, Path(os.path.realpath(state.settings.uploads)), choice)


@router.get("/jobs", summary="Jobs on the queue (shared with `vidocr watch`)")
def list_jobs(
    request: Request,
    state_: str | None = Query(None, alias="state", pattern="^(pending|running|done|failed)$"),
    limit: int = Query(100, ge=1, le=1000),
) -> dict[str, Any]:
    state = _state(request)
    state.authenticate(request, "read")
    queue = _queue(state)
    try:
        jobs = queue.jobs(state_, limit)
        counts = queue.counts()
    finally:
        queue.close()
    return {"counts": counts, "jobs": [_job_doc(state, j) for j in jobs if relative(j.path, state.roots)]}


@router.get("/jobs/{job_id}", summary="A job's state and progress")
def job_status(request: Request, job_id: Id) -> dict[str, Any]:
    state = _state(request)
    state.authenticate(request, "read")
    queue = _queue(state)
    try:
        job = queue.by_id(job_id)
    finally:
        queue.close()
    if job is None or relative(job.path, state.roots) is None:
        raise ApiError(404, f"no job {job_id}")
    return _job_doc(state, job)


@router.delete("/jobs/{job_id}", summary="Cancel a job (pending, or running in this server)")
def cancel_job(request: Request, job_id: Id) -> dict[str, Any]:
    from vidocr.serve.worker import wait_for

    state = _state(request)
    state.authenticate(request, "full")
    queue = _queue(state)
    try:
        job = queue.by_id(job_id)
        if job is None or relative(job.path, state.roots) is None:
            raise ApiError(404, f"no job {job_id}")
        if job.state == "pending":
            queue.cancel(job_id)
        elif job.state == "running":
            if not state.worker.cancel(job_id):
                raise ApiError(409, f"job {job_id} is running in another process (vidocr watch); it cannot be "
                                    "cancelled from here")
            wait_for(lambda: state.worker.current != job_id, 30.0)
        else:
            raise ApiError(409, f"job {job_id} is {job.state}: nothing to cancel")
        job = queue.by_id(job_id)
    finally:
        queue.close()
    assert job is not None
    return _job_doc(state, job)
