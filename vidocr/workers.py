"""A small pool of OCR worker processes that never re-imports the caller's ``__main__``.

multiprocessing's spawn/forkserver start methods re-run the main script in every worker, which
breaks any caller without an ``if __name__ == "__main__"`` guard, and fork is unsafe next to
FFmpeg's decoder threads. Each worker here is a fresh ``python -m vidocr.workers`` process that
loads one handler (``module:function`` returning a callable) and then answers requests sent as
length-prefixed pickles over its stdin/stdout (the worker's own prints go to stderr).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any

_HEADER = struct.Struct("<Q")


def _send(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _recv(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("worker closed its pipe")
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("worker closed its pipe")
    return pickle.loads(data)


class WorkerDied(RuntimeError):
    pass


class _Worker:
    def __init__(self, factory: str, args: tuple[Any, ...]) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vidocr.workers"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in, self._out = self.proc.stdin, self.proc.stdout
        self.lock = threading.Lock()
        _send(self._in, (factory, args))
        self._check(_recv(self._out))

    @staticmethod
    def _check(reply: tuple[bool, Any]) -> Any:
        ok, value = reply
        if not ok:
            raise value
        return value

    def call(self, item: Any) -> Any:
        with self.lock:
            try:
                _send(self._in, item)
                reply = _recv(self._out)
            except (EOFError, BrokenPipeError, OSError) as exc:
                raise WorkerDied(f"OCR worker process {self.proc.pid} died (exit {self.proc.poll()})") from exc
        return self._check(reply)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._in.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._out.close()


class WorkerPool:
    """``size`` worker processes, each running ``factory(*args)`` once to build its handler."""

    def __init__(self, size: int, factory: str, args: tuple[Any, ...] = ()) -> None:
        self._threads = ThreadPoolExecutor(max_workers=size, thread_name_prefix="vidocr-worker")
        # Start the workers in parallel: each loads its models (~1 s).
        starts = [self._threads.submit(_Worker, factory, args) for _ in range(size)]
        self._workers: list[_Worker] = []
        errors = []
        for fut in starts:
            try:
                self._workers.append(fut.result())
            except BaseException as exc:  # noqa: BLE001 - collected, re-raised below
                errors.append(exc)
        if errors:
            self.close()
            raise errors[0]
        self._free = list(self._workers)
        self._cond = threading.Condition()

    def _acquire(self) -> _Worker:
        with self._cond:
            while not self._free:
                self._cond.wait()
            return self._free.pop()

    def _release(self, worker: _Worker) -> None:
        with self._cond:
            self._free.append(worker)
            self._cond.notify()

    def _run_one(self, item: Any) -> Any:
        worker = self._acquire()
        try:
            return worker.call(item)
        finally:
            self._release(worker)

    def map(self, items: Sequence[Any]) -> list[Any]:
        return list(self._threads.map(self._run_one, items))

    def close(self) -> None:
        for worker in getattr(self, "_workers", []):
            worker.close()
        self._workers = []
        self._threads.shutdown(wait=True)


def _serve() -> None:
    # Keep the protocol pipe private: anything the handler prints goes to stderr.
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    proto_in = sys.stdin.buffer
    factory, args = _recv(proto_in)
    try:
        module, _, name = factory.partition(":")
        handler: Callable[[Any], Any] = getattr(importlib.import_module(module), name)(*args)
        _send(proto_out, (True, None))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        _send(proto_out, (False, RuntimeError(f"worker failed to start: {exc}")))
        return
    while True:
        try:
            item = _recv(proto_in)
        except EOFError:
            return
        try:
            _send(proto_out, (True, handler(item)))
        except Exception as exc:  # noqa: BLE001 - reported to the parent
            _send(proto_out, (False, exc))


if __name__ == "__main__":
    _serve()
