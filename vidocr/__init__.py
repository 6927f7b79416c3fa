"""vidocr: burned-in subtitles out of videos, timed, translated and searchable.

``cues, info = vidocr.extract(path, vidocr.ExtractOptions(...))``; over many videos, ``vidocr.Extractor(options)``
holds one engine. The pipeline (PyAV, OpenCV, ONNX Runtime) is imported on first use, so ``import vidocr`` stays
light; type checkers see every name through the imports below.
"""

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from vidocr.detect import DetectOptions
    from vidocr.engines import EngineOptions
    from vidocr.extractor import Extractor
    from vidocr.merge import MergeOptions
    from vidocr.pipeline import ExtractOptions, Progress, ProgressFn, extract

__version__ = "0.1.0"

__all__ = [
    "Box",
    "ConfigError",
    "Cue",
    "DecodeError",
    "DetectOptions",
    "EngineError",
    "EngineOptions",
    "EngineUnavailable",
    "ExtractOptions",
    "Extractor",
    "InputError",
    "MergeOptions",
    "OcrLine",
    "OcrResult",
    "OutputError",
    "Progress",
    "ProgressFn",
    "Task",
    "Timestamp",
    "VideoInfo",
    "VidocrError",
    "__version__",
    "extract",
]

#: Names loaded on first use, and the module each comes from.
_LAZY = {
    "extract": "vidocr.pipeline",
    "ExtractOptions": "vidocr.pipeline",
    "Progress": "vidocr.pipeline",
    "ProgressFn": "vidocr.pipeline",
    "Extractor": "vidocr.extractor",
    "EngineOptions": "vidocr.engines",
    "DetectOptions": "vidocr.detect",
    "MergeOptions": "vidocr.merge",
}

if not TYPE_CHECKING:  # a type checker takes the imports above; an unknown name stays an error for it

    def __getattr__(name: str):
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'vidocr' has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(_LAZY))
