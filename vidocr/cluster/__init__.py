"""Videos processed on a Ray cluster (``--ray``): one Ray task per video, one writer on the driver.

:class:`~vidocr.cluster.runner.RayExtractor` stands in for an :class:`~vidocr.extractor.Extractor`: each video is a
Ray task (decode, zones, change detection and OCR: the same :class:`~vidocr.extractor.Extractor` call as the plain
run, so the cues are the same), and its cues come back to the driver, which writes subtitle files and index rows
with the plain run's code. :mod:`~vidocr.cluster.service` runs the watch daemon's queue on it. Ray is imported only
here and only when used: without ``vidocr[ray]`` nothing else changes.
"""

from __future__ import annotations

from vidocr.cluster.runner import RayExtractor, RayOptions, VideoResult, WorkerLost

__all__ = ["RayExtractor", "RayOptions", "VideoResult", "WorkerLost"]
