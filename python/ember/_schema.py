"""JSON Schema as a grammar: a schema (a dict, or its JSON text) converted by ember's
runtime to the GBNF of the JSON it accepts (ember_json_schema_to_grammar); tools as the
JSON text the C API reads."""
from __future__ import annotations

import ctypes
import json
from typing import Optional, Sequence, Union

from ._base import _check
from ._capi import lib

Schema = Union[dict, bool, str, bytes]


def schema_bytes(schema: Schema) -> bytes:
    """The schema's JSON text as UTF-8: a dict (or True/False) written by json.dumps, in
    its keys' order (properties come in it); text as given."""
    if isinstance(schema, bytes):
        return schema
    if isinstance(schema, str):
        return schema.encode("utf-8")
    if isinstance(schema, (dict, bool)):
        return json.dumps(schema).encode("utf-8")
    raise TypeError(f"ember: a JSON Schema is a dict or its JSON text, not {type(schema).__name__}")


def tools_bytes(tools: Union[Sequence[dict], str, None]) -> bytes:
    """A tools list (OpenAI-style definitions, or its JSON text) as UTF-8 JSON; None or
    an empty list: b"" (none)."""
    if isinstance(tools, str):
        return tools.encode("utf-8")
    return json.dumps(list(tools)).encode("utf-8") if tools else b""


def grammar_text(convert, *args) -> str:
    """The GBNF a converter (ember_json_schema_to_grammar, ember_tool_grammar: its last
    two arguments the buffer and its length) writes: the size asked first."""
    length = ctypes.c_size_t(0)
    status = convert(*args, None, ctypes.byref(length))
    if status != 6:  # EMBER_RESOURCE_EXHAUSTED: the size it needs, in length
        _check(status)
    buffer = ctypes.create_string_buffer(length.value)
    _check(convert(*args, buffer, ctypes.byref(length)))
    return buffer.raw[:length.value].decode("utf-8")


def json_schema_to_grammar(schema: Schema) -> str:
    """The GBNF (rule root) of the JSON texts ``schema`` accepts: the subset of JSON
    Schema docs/structured-output.md lists. Malformed JSON raises EmberError naming the
    byte; a keyword outside the subset raises it naming the keyword and where it is."""
    data = schema_bytes(schema)
    return grammar_text(lib.ember_json_schema_to_grammar, data, len(data))
