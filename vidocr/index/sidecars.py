"""Subtitle files next to a video (``movie.srt``, ``movie.en.vtt``, ``movie.zh-Hans.ass``): finding and reading them.

A sidecar belongs to a video when its name is the video's name without extension, then optional dot-separated
tags, then ``.srt``, ``.vtt``, ``.ass`` or ``.ssa``. The first tag that looks like a language code (``en``,
``chi``, ``zh-Hans``, ``pt_BR``) becomes the track's language. SRT is read with pysrt; WebVTT and ASS/SSA with the
small readers below, which keep the text and drop styling, positioning and karaoke tags.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pysrt

from vidocr.errors import InputError, one_line
from vidocr.files import output_stem

SIDECAR_EXTENSIONS = (".srt", ".vtt", ".ass", ".ssa")
_LANG = re.compile(r"^[a-z]{2,3}([-_][a-z0-9]{2,8})*$", re.IGNORECASE)
_VTT_TIME = re.compile(r"^\s*((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})\s+-->\s+((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})")
# HTML-like tags, and ASS overrides that SRT files carry for position ({\an8}: top).
_TAG = re.compile(r"<[^>]*>|\{\\[^}]*\}")
_ASS_OVERRIDE = re.compile(r"\{[^}]*\}")

Cues = list[tuple[int, int, str]]
_MAX_MS = 2**53


@dataclass(frozen=True)
class Sidecar:
    path: Path
    lang: str | None


def find_sidecars(video: Path, names: Iterable[str]) -> list[Sidecar]:
    """The sidecars of ``video`` among the file ``names`` of its folder, sorted by name.

    When another video beside it has the same stem (``a.mp4`` and ``a.mkv``), only files named after the
    whole video name (``a.mp4.srt``, as vidocr writes then) are its own: ``a.srt`` could be either's.
    """
    names = sorted(names)
    stem = output_stem(video, names) + "."
    found = []
    for name in names:
        lower = name.lower()
        if not (name.startswith(stem) and lower.endswith(SIDECAR_EXTENSIONS)):
            continue
        tags = name[len(stem) : name.rindex(".")]
        lang = next((tag for tag in tags.split(".") if _LANG.match(tag)), None) if tags else None
        found.append(Sidecar(video.with_name(name), lang))
    return found


def read_sidecar(path: Path) -> Cues:
    """Cues of a subtitle file as (start_ms, end_ms, text); :class:`InputError` if it cannot be read."""
    try:
        text = decode(path.read_bytes())
    except OSError as err:
        raise InputError(f"cannot read subtitles: {err.strerror}", str(path)) from None
    suffix = path.suffix.lower()
    try:
        if suffix == ".srt":
            cues = [(item.start.ordinal, item.end.ordinal, item.text) for item in pysrt.from_string(text)]
        else:
            cues = parse_vtt(text) if suffix == ".vtt" else parse_ass(text)
    except (ValueError, IndexError, OverflowError, AttributeError, TypeError) as err:
        raise InputError(f"malformed subtitles: {one_line(str(err))[:200]}", str(path)) from None
    # Times past ~285 million years are junk (and would not fit SQLite's integers).
    return [(start, end, clean) for start, end, body in cues if 0 <= start <= _MAX_MS and 0 <= end <= _MAX_MS
            and (clean := _clean(body))]


def decode(data: bytes) -> str:
    """Subtitle files come in UTF-8 (with or without BOM), UTF-16 with BOM, GB18030 (Chinese) or Latin-1."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def parse_vtt(text: str) -> Cues:
    cues: Cues = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    i = 0
    while i < len(lines):
        m = _VTT_TIME.match(lines[i])
        i += 1
        if not m:
            continue
        body = []
        while i < len(lines) and lines[i].strip():
            body.append(lines[i])
            i += 1
        cues.append((_ms(m.group(1)), _ms(m.group(2)), "\n".join(body)))
    return cues


def parse_ass(text: str) -> Cues:
    """Dialogue lines of the [Events] section, fields named by its Format line (Text is last, may hold commas)."""
    cues: Cues = []
    fields: list[str] = []
    in_events = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            in_events = line.lower() == "[events]"
        elif in_events and line.lower().startswith("format:"):
            fields = [f.strip().lower() for f in line[7:].split(",")]
        elif in_events and fields and line.lower().startswith("dialogue:"):
            values = [v.strip() for v in line[9:].split(",", len(fields) - 1)]
            row = dict(zip(fields, values, strict=False))
            if "start" in row and "end" in row:
                body = _ASS_OVERRIDE.sub("", row.get("text", "")).replace("\\N", "\n").replace("\\n", "\n")
                cues.append((_ms(row["start"]), _ms(row["end"]), body.replace("\\h", " ")))
    return sorted(cues)


def _ms(stamp: str) -> int:
    parts = stamp.replace(",", ".").split(":")
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + float(part)
    return round(seconds * 1000)


#: Bidi controls subtitle files put around right-to-left lines (vidocr's writers: RLE ... PDF): display, not text.
_BIDI = str.maketrans("", "", "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _clean(body: str) -> str:
    lines = (" ".join(_TAG.sub("", line).translate(_BIDI).split()) for line in body.split("\n"))
    return "\n".join(line for line in lines if line)
