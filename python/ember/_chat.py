"""``Chat``: a conversation over a session, with the model's chat template."""
from __future__ import annotations

import ctypes
from typing import Optional

from . import _capi
from ._base import _check, _Handle
from ._capi import lib
from ._session import Session


class Chat(_Handle):
    """A conversation over a session, rendered with the model's chat template.

    ``send(text)`` adds a user turn and returns the assistant's reply; the KV cache
    keeps what it already holds, so each turn prefills only what is new.
    """

    _kind = "chat"

    def __init__(self, session: Session, system: Optional[str] = None, *,
                 max_text_bytes: int = 0, max_messages: int = 0,
                 enable_thinking: Optional[bool] = None):
        self.session = session
        options = _capi.defaults(_capi.ChatOptions, lib.ember_chat_options_default)
        options.max_text_bytes = max_text_bytes
        if max_messages:
            options.max_messages = max_messages
        if enable_thinking is not None:
            options.enable_thinking = int(enable_thinking)
        self._handle = None
        handle = ctypes.c_void_p()
        with session._guard:
            _check(lib.ember_chat_create(session.handle, ctypes.byref(options),
                                         ctypes.byref(handle)))
        self._handle = handle
        session._chats.add(self)
        if system:
            self.set_system(system)

    def close(self) -> None:
        """Frees the conversation (closing its session closes it too)."""
        if getattr(self, "_handle", None):
            lib.ember_chat_free(self._handle)
            self._handle = None

    def set_system(self, text: str) -> None:
        """The system text from the next reply on ("" : none)."""
        data = text.encode("utf-8")
        with self.session._guard:
            _check(lib.ember_chat_set_system(self.handle, data, len(data)))

    def add(self, role: str, text: str) -> None:
        """Appends a turn: "user", "assistant" (a reply given elsewhere) or "tool"."""
        data = text.encode("utf-8")
        with self.session._guard:
            _check(lib.ember_chat_add(self.handle, role.encode(), data, len(data)))

    def reply(self, max_new: int = 256) -> str:
        """Generates the assistant's reply to the conversation and appends it."""
        pieces = []

        def callback(user, token, data, length):
            pieces.append(ctypes.string_at(data, length) if length else b"")
            return 1

        native = _capi.TokenCallback(callback)
        generated = ctypes.c_size_t()
        with self.session._guard:
            _check(lib.ember_chat_generate(self.handle, max_new, native, None,
                                           ctypes.byref(generated)))
        return b"".join(pieces).decode("utf-8", "replace")

    def send(self, text: str, max_new: int = 256) -> str:
        """Adds a user turn and returns the reply."""
        self.add("user", text)
        return self.reply(max_new)

    def reset(self) -> None:
        """Forgets the turns (the system text stays)."""
        with self.session._guard:
            lib.ember_chat_reset(self.handle)

    @property
    def stats(self) -> dict:
        """What the last reply cost: prompt, cached and generated tokens, seconds."""
        stats = _capi.ChatStats()
        stats.struct_size = ctypes.sizeof(stats)
        _check(lib.ember_chat_last_stats(self.handle, ctypes.byref(stats)))
        return {name: getattr(stats, name) for name, _ in stats._fields_[1:]}
