"""``Model``: a .ember file mapped read-only, and what it reports."""
from __future__ import annotations

import ctypes
import os
from typing import Iterable, Optional, Sequence, Union

from . import _capi
from ._base import _check, _Handle
from ._capi import lib
from ._reports import ModelInfo, model_info
from ._schema import grammar_text, schema_bytes, tools_bytes


class Model(_Handle):
    """A .ember model file, mapped read-only: its weights are used in place.

    Sessions keep their model alive; ``close()`` (or ``with``) releases this handle.
    """

    _kind = "model"

    def __init__(self, path: Union[str, os.PathLike]):
        self._handle = ctypes.c_void_p()
        _check(lib.ember_model_open(os.fsencode(path), ctypes.byref(self._handle)))
        self.path = os.fspath(path)

    def close(self) -> None:
        """Releases this handle (sessions over the model keep it until they go)."""
        handle = getattr(self, "_handle", None)
        if handle:
            lib.ember_model_free(handle)
            self._handle = None

    @property
    def vocab_size(self) -> int:
        """Tokens in the vocabulary (the length of a row of logits)."""
        return lib.ember_model_vocab_size(self.handle)

    @property
    def max_context(self) -> int:
        """The longest context the model was trained for."""
        return lib.ember_model_max_context(self.handle)

    @property
    def embedding_dims(self) -> int:
        """The values of an embedding model's vectors (``Session.embed``); 0 for a
        model that puts out logits."""
        return lib.ember_model_embedding_dims(self.handle)

    @property
    def has_vision(self) -> bool:
        """Whether the model has a vision tower (``Session.generate(images=...)``)."""
        return bool(lib.ember_model_has_vision(self.handle))

    @property
    def bos(self) -> Optional[int]:
        """The beginning-of-text token, or None."""
        value = lib.ember_model_bos(self.handle)
        return None if value < 0 else value

    @property
    def eos(self) -> Optional[int]:
        """The end-of-text token, or None."""
        value = lib.ember_model_eos(self.handle)
        return None if value < 0 else value

    @property
    def info(self) -> ModelInfo:
        """The architecture (layers, heads, KV heads, dimensions, norm, activation,
        positions, ...), the tokenizer's kind, and the parameters by kind and by stored
        type, as ``ember inspect`` prints them."""
        return model_info(lib, self.handle, _check)

    @property
    def has_chat_template(self) -> bool:
        """Whether the model holds a compiled chat template (``Chat`` needs one)."""
        return bool(lib.ember_model_has_chat_template(self.handle))

    def grammar_bytes(self, gbnf: str, root: Optional[str] = None) -> int:
        """Arena bytes a GBNF grammar takes in a session of this model (what
        ``Session(grammar_bytes=...)`` must be at least): builds its tables."""
        options = _capi.defaults(_capi.GrammarOptions, lib.ember_grammar_options_default)
        root_bytes = root.encode() if root else None
        options.root = root_bytes
        data = gbnf.encode("utf-8")
        size = ctypes.c_size_t()
        _check(lib.ember_grammar_bytes(self.handle, data, len(data), ctypes.byref(options),
                                       ctypes.byref(size)))
        return size.value

    def json_schema_bytes(self, schema) -> int:
        """Arena bytes a JSON Schema's grammar (a dict or its JSON text) takes in a
        session of this model, as ``grammar_bytes`` tells for GBNF."""
        data = schema_bytes(schema)
        size = ctypes.c_size_t()
        _check(lib.ember_json_schema_bytes(self.handle, data, len(data), ctypes.byref(size)))
        return size.value

    def tool_grammar(self, tools) -> str:
        """The GBNF of one call to any of ``tools`` (OpenAI-style definitions, or their
        JSON text) in this model's chat-template syntax, each call's arguments held to
        its function's ``parameters`` schema: what ``Chat.set_tools(tools,
        grammar=True)`` sets. ``grammar_bytes`` of it is the room a session needs."""
        data = tools_bytes(tools)
        return grammar_text(lib.ember_tool_grammar, self.handle, data, len(data))

    def token_bytes(self, token: int, previous: int = -1) -> bytes:
        """The bytes ``token`` adds to the text after ``previous`` (-1: at the start)."""
        data, length = ctypes.c_void_p(), ctypes.c_size_t()
        _check(lib.ember_detokenize(self.handle, previous, token, ctypes.byref(data),
                                    ctypes.byref(length)))
        return ctypes.string_at(data, length.value) if length.value else b""

    def detokenize(self, tokens: Iterable[int]) -> str:
        """The text of a sequence of tokens (invalid UTF-8 replaced by U+FFFD)."""
        out, previous = [], -1
        for token in tokens:
            out.append(self.token_bytes(token, previous))
            previous = token
        return b"".join(out).decode("utf-8", "replace")

    def render_chat(self, messages: Sequence[dict], *, add_generation_prompt: bool = True,
                    enable_thinking: Optional[bool] = None) -> str:
        """The messages ({"role", "content"}) as the model's chat template writes them."""
        array = (_capi.ChatMessage * len(messages))()
        keep = []
        for i, message in enumerate(messages):
            role = message["role"].encode()
            content = message["content"].encode()
            keep += [role, content]
            array[i] = _capi.ChatMessage(role, content, len(content))
        options = _capi.defaults(_capi.ChatOptions, lib.ember_chat_options_default)
        options.add_generation_prompt = int(add_generation_prompt)
        if enable_thinking is not None:
            options.enable_thinking = int(enable_thinking)
        capacity = 4096 + 4 * sum(len(k) for k in keep)
        while True:
            buffer = ctypes.create_string_buffer(capacity)
            length = ctypes.c_size_t()
            status = lib.ember_chat_template_render(self.handle, array, len(messages),
                                                    ctypes.byref(options), buffer,
                                                    capacity, ctypes.byref(length))
            if status == 6 and capacity < (1 << 28):  # resource exhausted: a bigger one
                capacity *= 2
                continue
            _check(status)
            return buffer.raw[:length.value].decode("utf-8", "replace")
