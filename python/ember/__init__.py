"""ember from Python: run quantized transformer language models on the CPU.

A thin layer over ember's C API (runtime/ember.h) through ctypes::

    import ember
    model = ember.Model("stories.ember")
    session = ember.Session(model, context=256)
    print(session.generate("Once upon a time", max_new=40))
    session.reset()           # forget the context: the stream tells the same story
    for piece in session.stream("Once upon a time", max_new=40):
        print(piece, end="", flush=True)

    session.reset()
    session.prefill(session.tokenize("Once upon a time"))
    session.logits            # NumPy view of the arena's logits: [vocab], no copy
    session.top_k(5)          # [(token id, its text, probability), ...]

    model.info                # ModelInfo: config, parameters by kind and type
    seen = ember.Session(model, context=64, attention=True).attention("Once upon a time")
    seen.shape                # [layers, heads, query, key]: a view of the arena

    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    session = ember.Session(model, grammar_bytes=model.json_schema_bytes(schema))
    session.set_json_schema(schema)   # JSON the schema accepts from now on

    fast = ember.Session(model, draft_max=8)
    fast.set_lookup(3)        # speculative decoding: drafts from the context's n-grams
    fast.generate("Once upon a time", max_new=40)   # greedy: the same text, sooner
    fast.speculative_stats()  # SpeculativeStats: drafted, accepted, acceptance, ...

Memory: a session takes all it needs at creation (its arena); nothing it computes
afterwards allocates. ``Session.logits`` is a read-only view of that arena, changed by
the next prefill or decode (``.copy()`` keeps one).

Threads: every call into ember releases the GIL (ctypes does), so sessions on different
threads run in parallel. A session is used by one thread at a time: a call while another
thread is inside one of its calls (or iterating its ``stream``) raises ``EmberBusy``.
Models are shared freely.
"""
from __future__ import annotations

from ._base import EmberBusy, EmberError
from ._capi import lib
from ._chat import Chat
from ._model import Model
from ._reports import AttentionSelection, ModelInfo, SpeculativeStats
from ._schema import json_schema_to_grammar
from ._session import Session

__all__ = ["Model", "Session", "Chat", "EmberError", "EmberBusy", "ModelInfo",
           "AttentionSelection", "SpeculativeStats", "json_schema_to_grammar", "version"]


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return lib.ember_version().decode()
