"""What the package's classes share: ember's errors, the handle base class and the
one-thread-at-a-time guard of a session."""
from __future__ import annotations

import ctypes
import threading
from typing import Iterable

from ._capi import lib


class EmberError(Exception):
    """A failed ember call: ``status`` is its ember_status name, the text ember's message."""

    def __init__(self, status: int, message: str):
        self.status = lib.ember_status_string(status).decode()
        self.code = status
        super().__init__(f"{message} ({self.status})" if message else self.status)


class EmberBusy(RuntimeError):
    """A session used by a second thread while the first is inside one of its calls."""


def _check(status: int) -> None:
    if status != 0:
        raise EmberError(status, lib.ember_last_error().decode("utf-8", "replace"))


def _ids(tokens: Iterable[int]) -> ctypes.Array:
    values = list(tokens)
    return (ctypes.c_int32 * len(values))(*values)


class _Handle:
    """An object over a C handle: ``close()`` releases it, as leaving a ``with`` block
    and garbage collection do; ``handle`` refuses a closed one."""

    _handle = None
    _kind = "handle"

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError

    @property
    def handle(self) -> ctypes.c_void_p:
        if not self._handle:
            raise ValueError(f"ember: the {self._kind} is closed")
        return self._handle


class _Guard:
    """One thread at a time inside a session's calls (EmberBusy for a second)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            raise EmberBusy("ember: this session is in use by another thread (or by a "
                            "stream not yet finished): use one session per thread")

    def __exit__(self, *exc) -> None:
        self._lock.release()
