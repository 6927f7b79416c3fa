"""Videos processed on a Ray cluster (``--ray``): one Ray task per video, one writer on the driver.

:class:`~vidocr.cluster.runner.RayExtractor` stands in for an :class:`~vidocr.extractor.Extractor`: each video is a
Ray task (decode, zones, change detection and OCR: the same :class:`~vidocr.extractor.Extractor` call as the plain
run, so the cues are the same), and its cues come back to the driver, which writes subtitle files and index rows
with the plain run's code. :mod:`~vidocr.cluster.service` runs the watch daemon's queue on it;
:mod:`~vidocr.cluster.nodes` keeps per-node throughput in the queue for ``vidocr jobs``. Ray is imported only when
used: without ``vidocr[ray]`` nothing else changes. The names below load on first use (``vidocr jobs`` reads
:mod:`~vidocr.cluster.nodes` without loading the pipeline).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vidocr.cluster.runner import RayExtractor, RayOptions, VideoResult, WorkerLost

__all__ = ["RayExtractor", "RayOptions", "VideoResult", "WorkerLost"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from vidocr.cluster import runner

        return getattr(runner, name)
    raise AttributeError(f"module 'vidocr.cluster' has no attribute {name!r}")
