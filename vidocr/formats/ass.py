"""Advanced SubStation Alpha (.ass): cues keep their zone's position (top zones ``{\\an8}``, etc.)."""

from __future__ import annotations

from collections.abc import Sequence

from vidocr.formats import rtl_embedded, zone_position
from vidocr.types import Cue, VideoInfo

_ALIGN = {"top": 8, "middle": 5}


def ass_time(ms: int) -> str:
    cs = (ms + 5) // 10
    hours, rest = divmod(cs, 360_000)
    minutes, rest = divmod(rest, 6000)
    seconds, centis = divmod(rest, 100)
    return f"{hours:d}:{minutes:02d}:{seconds:02d}.{centis:02d}"


def _text(cue: Cue) -> str:
    # Braces open override blocks in ASS; line breaks are \N.
    body = rtl_embedded(cue.text).replace("{", "(").replace("}", ")").replace("\n", "\\N")
    align = _ALIGN.get(zone_position(cue) or "")
    return f"{{\\an{align}}}{body}" if align else body


class AssWriter:
    extension = "ass"

    def render(self, cues: Sequence[Cue], info: VideoInfo) -> str:
        width, height = info.width or 1920, info.height or 1080
        size = max(12, round(height * 0.055))
        margin = max(8, round(height * 0.04))
        lines = [
            "[Script Info]",
            "; written by vidocr",
            "ScriptType: v4.00+",
            f"PlayResX: {width}",
            f"PlayResY: {height}",
            "WrapStyle: 0",
            "ScaledBorderAndShadow: yes",
            "",
            "[V4+ Styles]",
            "Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, "
            "Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, "
            "MarginL, MarginR, MarginV, Encoding",
            f"Style: Default,Sans,{size},&H00FFFFFF,&H000000FF,&H00000000,&H64000000,0,0,0,0,100,100,0,0,1,"
            f"{max(1, size // 16)},1,2,{margin},{margin},{margin},1",
            "",
            "[Events]",
            "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text",
        ]
        for cue in cues:
            lines.append(f"Dialogue: 0,{ass_time(cue.start_ms)},{ass_time(cue.end_ms)},Default,,0,0,0,,{_text(cue)}")
        return "\n".join(lines) + "\n"
