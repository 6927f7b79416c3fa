"""WebVTT (.vtt)."""

from __future__ import annotations

from collections.abc import Sequence

from vidocr.types import Cue, VideoInfo


def vtt_time(ms: int) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}"


def _escape(text: str) -> str:
    # Cue text may not contain "-->" or blank lines; & and < start entities and tags.
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "\n".join(line for line in text.split("\n") if line.strip())


class VttWriter:
    extension = "vtt"

    def render(self, cues: Sequence[Cue], info: VideoInfo) -> str:
        parts = ["WEBVTT", ""]
        for i, cue in enumerate(cues, start=1):
            parts += [str(i), f"{vtt_time(cue.start_ms)} --> {vtt_time(cue.end_ms)}", _escape(cue.text), ""]
        return "\n".join(parts)
