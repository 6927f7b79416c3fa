"""SubRip (.srt) via pysrt. Cues of a top zone start with ``{\\an8}`` (middle: ``{\\an5}``), the ASS override that
mpv, VLC, FFmpeg and most players honour in SRT, so a sign at the top is not drawn over the dialogue."""

from __future__ import annotations

import io
from collections.abc import Sequence

import pysrt

from vidocr.formats import rtl_embedded, zone_position
from vidocr.types import Cue, VideoInfo

_ALIGN = {"top": "{\\an8}", "middle": "{\\an5}"}


class SrtWriter:
    extension = "srt"

    def render(self, cues: Sequence[Cue], info: VideoInfo) -> str:
        items = pysrt.SubRipFile()
        for i, cue in enumerate(cues, start=1):
            items.append(
                pysrt.SubRipItem(
                    index=i,
                    start=pysrt.SubRipTime(milliseconds=cue.start_ms),
                    end=pysrt.SubRipTime(milliseconds=cue.end_ms),
                    text=_ALIGN.get(zone_position(cue) or "", "") + rtl_embedded(cue.text.replace("\n\n", "\n")),
                )
            )
        buf = io.StringIO()
        items.write_into(buf, eol="\n")
        return buf.getvalue()
