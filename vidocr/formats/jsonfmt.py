"""JSON: cues with times in ms, lines, confidence and box, plus the video's metadata and run stats."""

from __future__ import annotations

import json
from collections.abc import Sequence

from vidocr import __version__
from vidocr.types import Cue, VideoInfo


class JsonWriter:
    extension = "json"

    def render(self, cues: Sequence[Cue], info: VideoInfo) -> str:
        doc = {
            "generator": f"vidocr {__version__}",
            "video": info.to_dict(),
            "cues": [cue.to_dict() for cue in cues],
        }
        return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
