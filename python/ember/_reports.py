"""What the C API reports about a model and a session: ``Model.info`` (the
configuration and parameters counted by kind and type, from ``ember_model_get_info``),
the selection of attention weights a session records (``ember_attention``) and what
speculative decoding drafted and accepted (``ember_session_speculative_stats``).

``ember/__init__.py`` exposes them; the types are public as ``ember.ModelInfo``,
``ember.AttentionSelection`` and ``ember.SpeculativeStats``.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Dict, Union

from . import _capi

# ember_model_info's params_* fields, named as `ember inspect` prints the kinds.
_KINDS = (("embeddings", "params_embeddings"), ("W_q", "params_wq"), ("W_k", "params_wk"),
          ("W_v", "params_wv"), ("W_o", "params_wo"), ("ffn", "params_ffn"),
          ("norms", "params_norms"), ("classifier", "params_classifier"),
          ("other", "params_other"))
_TYPES = ("f32", "f16", "bf16", "q8", "q4", "q4k", "q5k", "q6k")


@dataclass(frozen=True)
class ModelInfo:
    """A model's architecture and its parameters, as ``ember inspect`` prints them.

    ``parameters`` maps each kind the model has ("embeddings", "W_q", "W_k", "W_v",
    "W_o", "ffn", "norms", "classifier", "other") to its count of weights and biases;
    a tied classifier is the token embedding, counted once (``tied_embeddings``), as
    PyTorch's ``parameters()`` counts a shared tensor. ``weight_types`` maps each
    stored type ("f32", "q8", "q4k", ...) to the parameters stored in it.
    """

    architecture: str
    description: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_model: int
    ffn_dim: int
    vocab_size: int
    max_context: int
    norm: str  # "rmsnorm" or "layernorm"
    pre_norm: bool
    norm_eps: float
    activation: str  # "silu", "relu", "gelu_tanh", "gelu_erf"
    gated_ffn: bool
    positions: str  # "none", "learned", "rope"
    rope_theta: float
    rope_scaling: str
    causal: bool
    qkv_bias: bool
    out_bias: bool
    ffn_bias: bool
    tied_embeddings: bool
    qk_norm: bool
    sliding_window: int
    sliding_layers: int
    tokenizer: str  # "sentencepiece-bpe", "byte-level-bpe" or "wordpiece"
    total_parameters: int
    parameters: Dict[str, int] = field(default_factory=dict)
    weight_types: Dict[str, int] = field(default_factory=dict)
    weight_bytes: int = 0

    @property
    def attention_kind(self) -> str:
        """"MHA", "GQA" or "MQA", from the heads and KV heads."""
        if self.n_kv_heads == self.n_heads:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"


def model_info(lib: ctypes.CDLL, handle: ctypes.c_void_p, check) -> ModelInfo:
    """ModelInfo from ember_model_get_info (``check`` raises on a failed status)."""
    raw = _capi.ModelInfo()
    raw.struct_size = ctypes.sizeof(raw)
    check(lib.ember_model_get_info(handle, ctypes.byref(raw)))
    text = {name: (getattr(raw, name) or b"").decode("utf-8", "replace")
            for name in ("architecture", "description", "norm", "activation", "positions",
                         "rope_scaling", "tokenizer")}
    flags = {name: bool(getattr(raw, name))
             for name in ("pre_norm", "gated_ffn", "causal", "qkv_bias", "out_bias",
                          "ffn_bias", "tied_embeddings", "qk_norm")}
    numbers = {name: getattr(raw, name)
               for name in ("n_layers", "n_heads", "n_kv_heads", "head_dim", "d_model",
                            "ffn_dim", "vocab_size", "max_context", "norm_eps",
                            "rope_theta", "sliding_window", "sliding_layers")}
    # Floats as the library holds them (float32), printed short: 1e-05, not 9.99e-06.
    for name in ("norm_eps", "rope_theta"):
        numbers[name] = float(f"{numbers[name]:.7g}")
    kinds = {kind: getattr(raw, name) for kind, name in _KINDS if getattr(raw, name)}
    types = {t: getattr(raw, "params_" + t) for t in _TYPES if getattr(raw, "params_" + t)}
    return ModelInfo(**text, **flags, **numbers, total_parameters=raw.params_total,
                     parameters=kinds, weight_types=types, weight_bytes=raw.weight_bytes)


@dataclass(frozen=True)
class AttentionSelection:
    """Which attention weights a session records: layers [first_layer, first_layer +
    num_layers), query heads likewise (0: through the last), query and key positions
    [0, max_positions) (0: the session's context). The record takes layers x heads x
    max_positions^2 floats of the arena: select what you will look at."""

    first_layer: int = 0
    num_layers: int = 0
    first_head: int = 0
    num_heads: int = 0
    max_positions: int = 0


def selection_of(attention: Union[bool, AttentionSelection, dict, None]):
    """``Session(attention=...)``: True (every layer and head), a selection, a dict of
    its fields, or False/None (no record)."""
    if attention is None or attention is False:
        return None
    if attention is True:
        return AttentionSelection()
    if isinstance(attention, dict):
        return AttentionSelection(**attention)
    if isinstance(attention, AttentionSelection):
        return attention
    raise TypeError(f"ember: attention={attention!r}: give True, an AttentionSelection "
                    "or a dict of its fields")


def set_selection(options: _capi.SessionOptions, selection: AttentionSelection) -> None:
    options.record_attention = 1
    options.attention_first_layer = selection.first_layer
    options.attention_num_layers = selection.num_layers
    options.attention_first_head = selection.first_head
    options.attention_num_heads = selection.num_heads
    options.attention_max_positions = selection.max_positions


@dataclass(frozen=True)
class SpeculativeStats:
    """What a session's speculative decoding did (``Session.speculative_stats``), counted
    since the first ``set_lookup`` or ``set_draft`` or the last reset: the target model's
    passes after a sampled token (rounds), those that verified drafted tokens
    (verified), the tokens drafted and accepted, and the draft model's passes."""

    rounds: int = 0
    verified: int = 0
    drafted: int = 0
    accepted: int = 0
    draft_passes: int = 0

    @property
    def acceptance(self) -> float:
        """Accepted drafted tokens per drafted token (0.0 when none was drafted)."""
        return self.accepted / self.drafted if self.drafted else 0.0


def speculative_stats(raw: _capi.SpeculativeStats) -> SpeculativeStats:
    return SpeculativeStats(raw.rounds, raw.verified, raw.drafted, raw.accepted,
                            raw.draft_passes)
