"""``Chat``: a conversation over a session, with the model's chat template."""
from __future__ import annotations

import ctypes
import json
from typing import List, Optional, Sequence, Union

from . import _capi
from ._base import _check, _Handle
from ._capi import lib
from ._schema import schema_bytes, tools_bytes
from ._session import Session, image_structs


class Chat(_Handle):
    """A conversation over a session, rendered with the model's chat template.

    ``send(text)`` adds a user turn and returns the assistant's reply; the KV cache
    keeps what it already holds, so each turn prefills only what is new. A vision
    model's user turns take images (``send(text, images=[...])``, with ``max_images``
    set): each image marker in the text (Gemma 3: ``<start_of_image>``) takes the next
    image, or, with none, the images go before the text; an image's rows are reused
    from the cache in the turns after it.
    """

    _kind = "chat"

    def __init__(self, session: Session, system: Optional[str] = None, *,
                 max_text_bytes: int = 0, max_messages: int = 0,
                 enable_thinking: Optional[bool] = None, max_tools_bytes: int = 0,
                 max_images: int = 0):
        self.session = session
        options = _capi.defaults(_capi.ChatOptions, lib.ember_chat_options_default)
        options.max_text_bytes = max_text_bytes
        options.max_tools_bytes = max_tools_bytes
        if max_images < 0:
            raise ValueError(f"ember: max_images {max_images} is negative")
        options.max_images = max_images
        # The images' encoder (made at the first image): it holds the rows of the
        # conversation's images until reset(), max_images of them.
        self._max_images = max_images
        self._encoder = None
        self._encoded = 0
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
        if getattr(self, "_encoder", None):
            lib.ember_image_encoder_free(self._encoder)
            self._encoder = None

    def set_system(self, text: str) -> None:
        """The system text from the next reply on ("" : none)."""
        data = text.encode("utf-8")
        with self.session._guard:
            _check(lib.ember_chat_set_system(self.handle, data, len(data)))

    def add(self, role: str, text: str, images: Optional[Sequence] = None) -> None:
        """Appends a turn: "user", "assistant" (a reply given elsewhere) or "tool". A user
        turn may hold images: PNG or JPEG bytes, file paths, (height, width, 3) uint8
        arrays or PIL images, encoded here (at most ``max_images`` until reset())."""
        data = text.encode("utf-8")
        if images:
            if role != "user":
                raise ValueError("ember: images go with a user turn")
            self._attach(images)
        with self.session._guard:
            _check(lib.ember_chat_add(self.handle, role.encode(), data, len(data)))

    def _attach(self, images: Sequence) -> None:
        structs, keep = image_structs(images)
        if self._encoded + len(structs) > self._max_images:
            raise ValueError(f"ember: the chat holds {self._max_images} images "
                             f"(max_images) until reset(); {self._encoded} are in it")
        with self.session._guard:
            if self._encoder is None:
                options = _capi.defaults(_capi.VisionOptions,
                                         lib.ember_vision_options_default)
                options.max_images = self._max_images
                encoder = ctypes.c_void_p()
                _check(lib.ember_image_encoder_create(self.session.model.handle,
                                                      ctypes.byref(options), None, None, 0,
                                                      ctypes.byref(encoder)))
                self._encoder = encoder
            for image in structs:
                _check(lib.ember_image_encoder_add(self._encoder, ctypes.byref(image),
                                                   None))
                self._encoded += 1
                _check(lib.ember_chat_attach_image(self.handle, self._encoder,
                                                   self._encoded - 1))
        del keep

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

    def send(self, text: str, max_new: int = 256,
             images: Optional[Sequence] = None) -> str:
        """Adds a user turn (with its images, if any) and returns the reply."""
        self.add("user", text, images)
        return self.reply(max_new)

    def reset(self) -> None:
        """Forgets the turns and their images (the system text stays)."""
        with self.session._guard:
            lib.ember_chat_reset(self.handle)
            if self._encoder is not None:
                lib.ember_image_encoder_clear(self._encoder)
            self._encoded = 0

    @property
    def stats(self) -> dict:
        """What the last reply cost: prompt, cached and generated tokens, seconds."""
        stats = _capi.ChatStats()
        stats.struct_size = ctypes.sizeof(stats)
        _check(lib.ember_chat_last_stats(self.handle, ctypes.byref(stats)))
        return {name: getattr(stats, name) for name, _ in stats._fields_[1:]}

    def set_grammar(self, gbnf: Optional[str], root: Optional[str] = None) -> None:
        """Every reply from now on is a sentence of the grammar (llama.cpp's GBNF, from
        rule ``root``), ending at the template's end of turn; a reply that ``max_new`` or
        the context cuts short raises ``EmberError`` ("out of range"). Replaces the tool
        grammar (``set_tools(..., grammar=)``) and is replaced by it; ``None``: none."""
        options = _capi.defaults(_capi.GrammarOptions, lib.ember_grammar_options_default)
        if root is not None:
            options.root = root.encode("utf-8")
        data = gbnf.encode("utf-8") if gbnf is not None else None
        with self.session._guard:
            _check(lib.ember_chat_set_grammar(self.handle, data, len(data or b""),
                                              ctypes.byref(options)))

    def set_json_schema(self, schema) -> None:
        """Every reply from now on is JSON that ``schema`` (a dict or its JSON text)
        accepts, as ``set_grammar`` holds it to GBNF; ``None``: none."""
        data = schema_bytes(schema) if schema is not None else None
        with self.session._guard:
            _check(lib.ember_chat_set_json_schema(self.handle, data, len(data or b"")))

    def set_tools(self, tools: Union[Sequence[dict], str, None], *,
                  grammar: Union[str, bool, None] = None) -> None:
        """The functions the model may call, as OpenAI-style definitions.

        ``tools`` is a list of ``{"type": "function", "function": {"name", "description",
        "parameters"}}`` (or its JSON text; ``None`` or ``[]``: none), rendered into the
        model's template from the next reply on; the chat must have been made with
        ``max_tools_bytes`` large enough for its JSON. Replies are then parsed for calls
        (``tool_calls``). ``grammar=True`` holds each call to its function's schema while
        the text around calls stays free (``Model.tool_grammar``: make the session with
        room for it); ``grammar`` as GBNF text (e.g. from ``ember grammar --tools``) holds
        calls to that grammar instead. Raises ``EmberError`` when the template shows no
        tool-call syntax.
        """
        data = tools_bytes(tools)
        with self.session._guard:
            _check(lib.ember_chat_set_tools(self.handle, data, len(data)))
            if grammar is True:
                _check(lib.ember_chat_constrain_tools(self.handle))
            elif isinstance(grammar, str):
                gbnf = grammar.encode("utf-8")
                _check(lib.ember_chat_set_tool_grammar(self.handle, gbnf, len(gbnf)))

    @property
    def tool_calls(self) -> List[dict]:
        """The calls the last reply made: ``[{"id", "name", "arguments"}]``, the arguments
        parsed from their JSON ([] when it made none, or when a call was cut off: then
        ``tool_calls_error`` says why). Answer each with ``add("tool", result)``."""
        count = ctypes.c_size_t()
        with self.session._guard:
            _check(lib.ember_chat_tool_call_count(self.handle, ctypes.byref(count), None))
            calls = []
            for i in range(count.value):
                call = _capi.ToolCall()
                call.struct_size = ctypes.sizeof(call)
                _check(lib.ember_chat_tool_call(self.handle, i, ctypes.byref(call)))
                name = ctypes.string_at(call.name, call.name_length).decode("utf-8")
                arguments = ctypes.string_at(call.arguments, call.arguments_length)
                calls.append({"id": call.id.decode(), "name": name,
                              "arguments": json.loads(arguments.decode("utf-8"))})
        return calls

    @property
    def tool_calls_error(self) -> str:
        """Why the last reply's calls did not parse ("" when they did, or there were none)."""
        count = ctypes.c_size_t()
        message = ctypes.c_char_p()
        with self.session._guard:
            _check(lib.ember_chat_tool_call_count(self.handle, ctypes.byref(count),
                                                  ctypes.byref(message)))
        return (message.value or b"").decode("utf-8", "replace")
