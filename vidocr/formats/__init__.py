"""Subtitle writers behind a small registry, and the function that writes a video's outputs.

Each writer renders cues to a string; :func:`write_outputs` writes every requested format
atomically as ``<output-dir>/<stem>.<ext>`` (translations as ``<stem>.<lang>.<ext>``), all or none.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from vidocr.atomic import write_texts_atomic
from vidocr.errors import ConfigError
from vidocr.langs import RTL, main_script
from vidocr.types import Cue, VideoInfo


class SubtitleWriter(Protocol):
    extension: str

    def render(self, cues: Sequence[Cue], info: VideoInfo) -> str: ...


WRITERS: dict[str, str] = {
    "srt": "vidocr.formats.srt:SrtWriter",
    "vtt": "vidocr.formats.vtt:VttWriter",
    "json": "vidocr.formats.jsonfmt:JsonWriter",
    "ass": "vidocr.formats.ass:AssWriter",
}


def get_writer(name: str) -> SubtitleWriter:
    try:
        target = WRITERS[name]
    except KeyError:
        raise ConfigError(f"unknown output format {name!r}; choose from: {', '.join(sorted(WRITERS))}") from None
    module, _, cls = target.partition(":")
    writer: SubtitleWriter = getattr(importlib.import_module(module), cls)()
    return writer


def parse_formats(spec: str | Sequence[str]) -> list[str]:
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    out = []
    for name in (n.strip().lower() for n in names):
        if name and name not in out:
            get_writer(name)
            out.append(name)
    if not out:
        raise ConfigError("no output format given")
    return out


def bilingual(cues: Sequence[Cue]) -> list[Cue]:
    """Original text with its translation below it, in one cue."""
    return [replace(c, text=f"{c.text}\n{c.translation}" if c.translation else c.text) for c in cues]


def translated(cues: Sequence[Cue]) -> list[Cue]:
    """Cues whose text is the translation (cues without one are dropped)."""
    return [replace(c, text=c.translation, translation=None) for c in cues if c.translation]


def output_path(output_dir: str | Path, stem: str, name: str, suffix: str = "") -> Path:
    """Where format ``name`` of a video is written: ``<output-dir>/<stem><suffix>.<ext>``."""
    return Path(output_dir) / f"{stem}{suffix}.{get_writer(name).extension}"


def write_outputs(
    cues: Sequence[Cue],
    info: VideoInfo,
    output_dir: str | Path,
    stem: str,
    formats: Sequence[str],
    *,
    translate_to: str | None = None,
    bilingual_cues: bool = False,
) -> list[Path]:
    """Render every format, then write them all or none (see :func:`write_texts_atomic`); returns the paths."""
    out_dir = Path(output_dir)
    # Zones are separate cues; every format lists them in time order.
    cues = sorted(cues, key=lambda c: (c.start_ms, c.end_ms))
    tracks: list[tuple[str, Sequence[Cue]]] = [("", bilingual(cues) if bilingual_cues else cues)]
    if translate_to and not bilingual_cues:
        tracks.append((f".{translate_to}", translated(cues)))
    rendered = [
        (output_path(out_dir, stem, name, suffix), get_writer(name).render(track, info))
        for suffix, track in tracks
        for name in formats
    ]
    # Everything is rendered before anything is written, and written before anything is replaced: a failure
    # leaves the previous set of files as it was, never a mix of old and new formats.
    return write_texts_atomic(rendered)


def zone_position(cue: Cue) -> str | None:
    """Where a cue's zone sits when it is not the default bottom: "top" or "middle" (zones ``top``, ``top2``...)."""
    name = cue.zone.rstrip("0123456789")
    return name if name in ("top", "middle") else None


#: Unicode RIGHT-TO-LEFT EMBEDDING ... POP DIRECTIONAL FORMATTING around a right-to-left line.
RLE, PDF = "\u202b", "\u202c"


def rtl_embedded(text: str) -> str:
    """``text`` with each line whose main script is written right to left (Arabic, Hebrew) wrapped in RLE ... PDF.

    Cue text is in logical order. A player lays a line out with the Unicode bidi algorithm, whose paragraph
    direction is left to right in libass (which mpv and FFmpeg draw SRT, VTT and ASS with) unless a style says
    Encoding -1, else the first strong letter's: a line that ends in "!", "." or "..." or holds a Latin word then
    shows its punctuation and words in the wrong places (checked with FFmpeg's libass: tests/test_lang_libass.py).
    The embedding makes the line right to left in every renderer, as subtitle editors' RTL fixes do.
    Left-to-right lines and the JSON output (data, not display) are unchanged; the index's sidecar reader drops
    the marks again."""
    if text.isascii():
        return text
    return "\n".join(
        f"{RLE}{line}{PDF}" if line.strip() and main_script(line) in RTL and not line.startswith(RLE) else line
        for line in text.split("\n")
    )
