"""SubRip (.srt) via pysrt."""

from __future__ import annotations

import io
from collections.abc import Sequence

import pysrt

from vidocr.types import Cue, VideoInfo


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
                    text=cue.text.replace("\n\n", "\n"),
                )
            )
        buf = io.StringIO()
        items.write_into(buf, eol="\n")
        return buf.getvalue()
