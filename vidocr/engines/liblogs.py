"""Logs of the libraries behind the model engines (vLLM, transformers, torch), sent through vidocr's logging.

Left alone, vLLM prints its INFO log to **stdout** in each of its processes (so ``vidocr extract --json`` output
cannot be parsed), and torch, transformers and vLLM add warnings, C++ messages and progress bars. The model engines
call :func:`prepare_vllm` / :func:`prepare_transformers` before importing those libraries:

- vLLM's processes (it starts them itself, so the environment is the only way in) get a logging config file
  (``VLLM_LOGGING_CONFIG_PATH``): records at WARNING (INFO with ``-v``) on stderr as ``vidocr: vllm: LEVEL: ...``;
  ERROR records, tracebacks included, go to a causes file instead, from which the engine takes the cause of a
  failure for its one-line :class:`~vidocr.errors.EngineError` (``-v`` prints them in full on stderr too).
  Python deprecation warnings and torch's C++ warnings are switched off in those processes unless ``-v``.
- In this process the ``transformers``, ``torch`` and ``py.warnings`` loggers hand their records to the handlers of
  the ``vidocr`` logger when an application (the CLI) gave it some, at the same levels.
- :func:`child_output_to_stderr`: while vLLM starts its processes, their stdout and stderr become a pipe copied to
  stderr (without Python tracebacks unless -v), so whatever they print lands on stderr.

``-v`` is read off the ``vidocr`` logger (DEBUG = verbose). Whatever the user set in the environment wins.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import sys
import tempfile
import threading
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

vidocr_log = logging.getLogger("vidocr")

_state: dict[str, Path] = {}


def verbose() -> bool:
    """Whether the application asked vidocr for details (``-v``: the ``vidocr`` logger at DEBUG)."""
    return vidocr_log.isEnabledFor(logging.DEBUG)


def library_level() -> int:
    return logging.INFO if verbose() else logging.WARNING


class LibraryFormatter(logging.Formatter):
    """``vidocr: vllm: WARNING: message``; an exception is its last line unless ``full`` (then the traceback)."""

    def __init__(self, full: bool = False, cause: bool = False) -> None:
        super().__init__()
        self.full, self.cause = full, cause

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        exc = record.exc_info
        if self.cause:  # one line per record: process, message, exception
            last = traceback.format_exception_only(exc[0], exc[1])[-1].strip() if exc and exc[0] else ""
            proc = getattr(record, "vllm_process_name", record.processName)
            return "\t".join(" ".join(str(part).split()) for part in (proc, message, last))
        head = f"vidocr: {record.name.split('.')[0]}: {record.levelname}: {message}"
        if exc and exc[0]:
            if self.full:
                return head + "\n" + "".join(traceback.format_exception(*exc)).rstrip()
            return f"{head}: {traceback.format_exception_only(exc[0], exc[1])[-1].strip()}"
        return head


class BelowError(logging.Filter):
    """Keeps records under ERROR: errors are reported through the engine's own error line (unless -v)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR


def _config_file() -> Path:
    """Write (once per process) the logging config vLLM's processes load, and the causes file it names."""
    if "config" not in _state:
        folder = Path(tempfile.mkdtemp(prefix="vidocr-vllm-logs-"))
        atexit.register(_remove, folder)
        causes = folder / "errors.log"
        causes.touch()
        full = verbose()
        stderr_handler: dict[str, object] = {
            "class": "logging.StreamHandler", "stream": "ext://sys.stderr", "formatter": "line",
            "level": logging.getLevelName(library_level()),
        }
        if not full:
            stderr_handler["filters"] = ["below_error"]
        config = {
            "version": 1,
            "disable_existing_loggers": False,
            "formatters": {
                "line": {"()": f"{__name__}.LibraryFormatter", "full": full},
                "cause": {"()": f"{__name__}.LibraryFormatter", "cause": True},
            },
            "filters": {"below_error": {"()": f"{__name__}.BelowError"}},
            "handlers": {
                "stderr": stderr_handler,
                "causes": {"class": "logging.FileHandler", "filename": str(causes), "formatter": "cause",
                           "level": "ERROR", "encoding": "utf-8"},
            },
            "loggers": {"vllm": {"handlers": ["stderr", "causes"], "level": logging.getLevelName(library_level()),
                                 "propagate": False}},
        }
        path = folder / "logging.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        _state["config"], _state["causes"] = path, causes
    return _state["config"]


def _remove(folder: Path) -> None:
    for item in folder.iterdir():
        with contextlib.suppress(OSError):
            item.unlink()
    with contextlib.suppress(OSError):
        folder.rmdir()


def _quiet_children() -> None:
    if verbose():
        return
    os.environ.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning,ignore::FutureWarning")
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")


def prepare_vllm() -> None:
    """Before ``import vllm``: its logging (all processes) on stderr through vidocr's format; see the module doc."""
    if "VLLM_LOGGING_CONFIG_PATH" not in os.environ and os.environ.get("VLLM_CONFIGURE_LOGGING", "1") != "0":
        os.environ["VLLM_LOGGING_CONFIG_PATH"] = str(_config_file())
    _quiet_children()
    prepare_transformers()


def prepare_transformers() -> None:
    """Before ``import transformers``: its verbosity follows vidocr's (WARNING, or INFO with -v)."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "info" if verbose() else "warning")
    _quiet_children()


def route_here() -> None:
    """After the imports: this process's library loggers and warnings go to the ``vidocr`` logger's handlers.

    Only when an application gave that logger handlers (the CLI does); a library user's own logging setup is left
    alone. Deprecation warnings of the libraries are shown with -v only.
    """
    handlers = list(vidocr_log.handlers)
    if not handlers:
        return
    level = library_level()
    for name in ("transformers", "torch", "py.warnings"):
        lib = logging.getLogger(name)
        lib.handlers[:] = handlers
        lib.setLevel(level)
        lib.propagate = False
    logging.captureWarnings(True)
    if not verbose():
        for category in (DeprecationWarning, FutureWarning):
            warnings.filterwarnings("ignore", category=category, module=r"(vllm|torch|transformers|triton)\b")
    with contextlib.suppress(ImportError):
        from transformers.utils import logging as hf_logging

        if not verbose():
            progress_off: Any = hf_logging.disable_progress_bar  # untyped in some transformers versions
            progress_off()


def causes_mark() -> int:
    """Where the causes file ends now (pass it to :func:`failure_cause` after a failure)."""
    path = _state.get("causes")
    try:
        return path.stat().st_size if path else 0
    except OSError:
        return 0


def failure_cause(mark: int = 0) -> str | None:
    """The first exception vLLM's processes logged since ``mark`` (the root cause), else the first error message."""
    path = _state.get("causes")
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            fh.seek(mark)
            rows = [line.rstrip("\n").split("\t") for line in fh if line.strip()]
    except OSError:
        return None
    rows = [row for row in rows if len(row) == 3]
    for _proc, _message, exc in rows:
        if exc:
            return exc
    return rows[0][1] if rows else None


class _Forwarder(threading.Thread):
    """Copies what vLLM's processes write (their stdout and stderr, through a pipe) to stderr, line by line, leaving
    out Python tracebacks unless -v: a failed start is reported as the engine's one-line error instead."""

    def __init__(self, read_fd: int, out_fd: int, tracebacks: bool) -> None:
        super().__init__(name="vidocr-vllm-output", daemon=True)
        self.read_fd, self.out_fd, self.tracebacks = read_fd, out_fd, tracebacks

    def run(self) -> None:
        in_traceback = False
        with open(self.read_fd, "rb") as pipe:
            for line in pipe:
                bare = line.strip()
                if not self.tracebacks:
                    if bare == b"Traceback (most recent call last):" or (
                            bare.startswith(b"Process ") and bare.endswith(b":") and b" " not in bare[8:]):
                        in_traceback = True  # multiprocessing's "Process EngineCore:" comes first
                    if in_traceback:
                        if line[:1] not in (b" ", b"\t") and bare and not bare.startswith(
                                (b"Traceback", b"Process ", b"During handling", b"The above exception")):
                            in_traceback = False  # the exception line ends the block; the engine reports it
                        continue
                self._write(line)
        with contextlib.suppress(OSError):
            os.close(self.out_fd)

    def _write(self, data: bytes) -> None:
        with contextlib.suppress(OSError):  # stderr gone: keep draining, a full pipe would stall vLLM
            os.write(self.out_fd, data)


@contextlib.contextmanager
def child_output_to_stderr() -> Iterator[None]:
    """While vLLM starts its processes, point file descriptors 1 and 2 at a pipe that :class:`_Forwarder` copies to
    stderr. The processes started meanwhile keep the pipe for good: nothing they print reaches stdout, and their
    tracebacks are left out (shown with -v). This process's own output in the meantime goes the same way: callers
    build engines before anything is printed on stdout (the CLI prints its JSON summary after the engine is built).
    """
    try:
        out_fd, err_fd = sys.__stdout__.fileno(), sys.__stderr__.fileno()  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # no real file descriptors (embedded, captured): nothing to do
        yield
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError, AttributeError):
            stream.flush()
    read_fd, write_fd = os.pipe()
    saved_out, saved_err = os.dup(out_fd), os.dup(err_fd)
    forwarder = _Forwarder(read_fd, os.dup(err_fd), tracebacks=verbose())
    forwarder.start()
    try:
        os.dup2(write_fd, out_fd)
        os.dup2(write_fd, err_fd)
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(ValueError, OSError, AttributeError):
                stream.flush()
        os.dup2(saved_out, out_fd)
        os.dup2(saved_err, err_fd)
        for fd in (saved_out, saved_err, write_fd):
            os.close(fd)
