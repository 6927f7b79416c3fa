"""vidocr: burned-in subtitles out of videos, timed, translated and searchable."""

from vidocr.errors import (
    ConfigError,
    DecodeError,
    EngineError,
    EngineUnavailable,
    InputError,
    OutputError,
    VidocrError,
)
from vidocr.types import Box, Cue, OcrLine, OcrResult, Task, Timestamp, VideoInfo

__version__ = "0.1.0"

__all__ = [
    "Box",
    "ConfigError",
    "Cue",
    "DecodeError",
    "EngineError",
    "EngineUnavailable",
    "InputError",
    "OcrLine",
    "OcrResult",
    "OutputError",
    "Task",
    "Timestamp",
    "VideoInfo",
    "VidocrError",
    "__version__",
    "extract",
    "ExtractOptions",
]


def __getattr__(name: str) -> object:
    # The pipeline pulls in PyAV/OpenCV; load it on first use so `import vidocr` stays light.
    if name in ("extract", "ExtractOptions"):
        from vidocr import pipeline

        return getattr(pipeline, name)
    raise AttributeError(name)
