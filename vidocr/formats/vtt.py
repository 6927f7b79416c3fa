"""WebVTT (.vtt). Cues of a top zone carry the cue setting ``line:0`` (the first line of the video), middle ones
``line:50%,center``; bottom cues keep the default place."""

from __future__ import annotations

from collections.abc import Sequence

from vidocr.formats import rtl_embedded, zone_position
from vidocr.types import Cue, VideoInfo


def vtt_time(ms: int) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}"


_SETTINGS = {"top": " line:0", "middle": " line:50%,center"}


def _escape(text: str) -> str:
    # Cue text may not contain "-->" or blank lines; & and < start entities and tags.
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "\n".join(line for line in text.split("\n") if line.strip())


class VttWriter:
    extension = "vtt"

    def render(self, cues: Sequence[Cue], info: VideoInfo) -> str:
        parts = ["WEBVTT", ""]
        for i, cue in enumerate(cues, start=1):
            settings = _SETTINGS.get(zone_position(cue) or "", "")
            text = rtl_embedded(_escape(cue.text))
            parts += [str(i), f"{vtt_time(cue.start_ms)} --> {vtt_time(cue.end_ms)}{settings}", text, ""]
        return "\n".join(parts)
