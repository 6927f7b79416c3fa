"""Structured logs for the daemon: every record may carry an event name and fields, printed as ``key=value``
text or as one JSON object per line (for journald, Loki, jq)."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any


def event(logger: logging.Logger, level: int, name: str, message: str, **fields: Any) -> None:
    """Log ``message`` with a machine-readable event ``name`` and ``fields``."""
    logger.log(level, message, extra={"event": name, "fields": fields})


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields = getattr(record, "fields", None)
    return dict(fields) if isinstance(fields, dict) else {}


class TextFormatter(logging.Formatter):
    """``2025-01-02T03:04:05 INFO job done job=3 path='/v/a.mp4' cues=5``"""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(record.created))
        parts = [stamp, record.levelname, record.getMessage()]
        parts += [f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in _fields(record).items()]
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (Unix seconds), level, event, msg, then the fields."""

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "event": getattr(record, "event", None) or "log",
            "msg": record.getMessage(),
        }
        doc.update(_fields(record))
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return json.dumps(doc, ensure_ascii=False, default=str)


def setup_logging(*, json_lines: bool, level: int) -> None:
    """Send the ``vidocr`` loggers (library and daemon) to stderr in the chosen form."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json_lines else TextFormatter())
    root = logging.getLogger("vidocr")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
