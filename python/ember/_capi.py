"""The C API (runtime/ember.h) through ctypes: the library, its structs and prototypes.

Nothing here is public: ember/__init__.py wraps it. Each struct mirrors ember.h field by
field; at load, every ``ember_*_options_default`` fills one and the size it writes into
``struct_size`` (the C compiler's ``sizeof``) must equal ctypes' own, so a header that
grew without this file is an import error rather than a corrupted call.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (POINTER, c_char, c_char_p, c_double, c_float, c_int, c_int32, c_int64,
                    c_size_t, c_uint32, c_uint64, c_void_p)
from pathlib import Path

c_status = c_int  # ember_status


class SessionOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("max_context", c_uint32),
        ("max_batch", c_uint32),
        ("max_prompt_bytes", c_uint32),
        ("all_logits", c_int),
        ("backend", c_uint32),
        ("ignore_baked_prompt", c_uint32),
        ("isa", c_char_p),
        ("kv_type", c_uint32),
        ("context_shift", c_int),
        ("context_keep", c_uint32),
        ("record_attention", c_int),
        ("attention_first_layer", c_uint32),
        ("attention_num_layers", c_uint32),
        ("attention_first_head", c_uint32),
        ("attention_num_heads", c_uint32),
        ("attention_max_positions", c_uint32),
        ("grammar_bytes", c_size_t),
        ("draft_max", c_uint32),
    ]


class ModelInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("architecture", c_char_p),
        ("description", c_char_p),
        ("n_layers", c_uint32),
        ("n_heads", c_uint32),
        ("n_kv_heads", c_uint32),
        ("head_dim", c_uint32),
        ("d_model", c_uint32),
        ("ffn_dim", c_uint32),
        ("vocab_size", c_uint32),
        ("max_context", c_uint32),
        ("norm", c_char_p),
        ("pre_norm", c_int),
        ("norm_eps", c_float),
        ("activation", c_char_p),
        ("gated_ffn", c_int),
        ("positions", c_char_p),
        ("rope_theta", c_float),
        ("rope_scaling", c_char_p),
        ("causal", c_int),
        ("qkv_bias", c_int),
        ("out_bias", c_int),
        ("ffn_bias", c_int),
        ("tied_embeddings", c_int),
        ("qk_norm", c_int),
        ("sliding_window", c_uint32),
        ("sliding_layers", c_uint32),
        ("tokenizer", c_char_p),
        ("params_total", c_uint64),
        ("params_embeddings", c_uint64),
        ("params_wq", c_uint64),
        ("params_wk", c_uint64),
        ("params_wv", c_uint64),
        ("params_wo", c_uint64),
        ("params_ffn", c_uint64),
        ("params_norms", c_uint64),
        ("params_classifier", c_uint64),
        ("params_other", c_uint64),
        ("params_f32", c_uint64),
        ("params_f16", c_uint64),
        ("params_bf16", c_uint64),
        ("params_q8", c_uint64),
        ("params_q4", c_uint64),
        ("params_q4k", c_uint64),
        ("params_q5k", c_uint64),
        ("params_q6k", c_uint64),
        ("weight_bytes", c_uint64),
    ]


class AttentionInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("first_layer", c_uint32),
        ("num_layers", c_uint32),
        ("first_head", c_uint32),
        ("num_heads", c_uint32),
        ("positions", c_size_t),
        ("rows", c_size_t),
    ]


class SamplerOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("temperature", c_float),
        ("top_k", c_uint32),
        ("top_p", c_float),
        ("seed", c_uint64),
        ("repeat_penalty", c_float),
        ("repeat_last_n", c_int32),
        ("frequency_penalty", c_float),
        ("presence_penalty", c_float),
        ("min_p", c_float),
        ("stop", POINTER(c_char_p)),
        ("n_stop", c_uint32),
    ]


class TokenizeOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("add_bos", c_int),
        ("parse_special", c_int),
    ]


class ThreadpoolOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("num_threads", c_int32),
        ("adapt_to_contention", c_int32),
    ]


class ChatMessage(ctypes.Structure):
    _fields_ = [
        ("role", c_char_p),
        ("content", c_char_p),
        ("content_length", c_size_t),
    ]


class ChatOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("max_text_bytes", c_uint32),
        ("max_messages", c_uint32),
        ("enable_thinking", c_int32),
        ("now_seconds", c_int64),
        ("add_generation_prompt", c_int),
        ("max_tools_bytes", c_uint32),
        ("max_images", c_uint32),
    ]


class ToolCall(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("id", ctypes.c_char * 10),
        ("name", c_void_p),
        ("name_length", c_size_t),
        ("arguments", c_void_p),
        ("arguments_length", c_size_t),
    ]


class ChatStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("prompt_tokens", c_uint32),
        ("cached_tokens", c_uint32),
        ("generated_tokens", c_uint32),
        ("dropped_messages", c_uint32),
        ("prefill_seconds", c_double),
        ("generate_seconds", c_double),
        ("context_shifts", c_uint32),
    ]


class ToolCall(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("id", c_char * 10),
        ("name", c_void_p),
        ("name_length", c_size_t),
        ("arguments", c_void_p),
        ("arguments_length", c_size_t),
    ]


class GrammarOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("root", c_char_p),
    ]


class SpeculativeStats(ctypes.Structure):  # ember_speculative_stats (no struct_size)
    _fields_ = [
        ("rounds", c_uint64),
        ("verified", c_uint64),
        ("drafted", c_uint64),
        ("accepted", c_uint64),
        ("draft_passes", c_uint64),
    ]


class Image(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("bytes", c_void_p),
        ("num_bytes", c_size_t),
        ("rgb", c_void_p),
        ("width", c_uint32),
        ("height", c_uint32),
    ]


class VisionOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("max_images", c_uint32),
        ("max_width", c_uint32),
        ("max_height", c_uint32),
        ("max_pixels", c_uint64),
        ("isa", c_char_p),
    ]


class EmbedOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("dims", c_uint32),
        ("normalize", c_int32),
        ("prompt_name", c_char_p),
    ]


# int (*)(void* user, int32_t token, const char* bytes, size_t length); bytes as a raw
# pointer: a piece may hold NUL bytes or part of a UTF-8 character.
TokenCallback = ctypes.CFUNCTYPE(c_int, c_void_p, c_int32, c_void_p, c_size_t)

_P = c_void_p  # opaque handles: ember_model*, ember_session*, ember_chat*, ...

_PROTOTYPES = {
    "ember_version": (c_char_p, []),
    "ember_status_string": (c_char_p, [c_status]),
    "ember_last_error": (c_char_p, []),
    "ember_session_options_default": (None, [POINTER(SessionOptions)]),
    "ember_sampler_options_default": (None, [POINTER(SamplerOptions)]),
    "ember_tokenize_options_default": (None, [POINTER(TokenizeOptions)]),
    "ember_threadpool_options_default": (None, [POINTER(ThreadpoolOptions)]),
    "ember_chat_options_default": (None, [POINTER(ChatOptions)]),
    "ember_grammar_options_default": (None, [POINTER(GrammarOptions)]),
    "ember_model_open": (c_status, [c_char_p, POINTER(_P)]),
    "ember_model_free": (None, [_P]),
    "ember_model_vocab_size": (c_uint32, [_P]),
    "ember_model_max_context": (c_uint32, [_P]),
    "ember_model_bos": (c_int32, [_P]),
    "ember_model_eos": (c_int32, [_P]),
    "ember_model_baked_tokens": (c_size_t, [_P]),
    "ember_model_has_chat_template": (c_int, [_P]),
    "ember_model_get_info": (c_status, [_P, POINTER(ModelInfo)]),
    "ember_threadpool_create_with_options": (c_status, [POINTER(ThreadpoolOptions),
                                                        POINTER(_P)]),
    "ember_threadpool_free": (None, [_P]),
    "ember_arena_bytes": (c_size_t, [_P, POINTER(SessionOptions)]),
    "ember_session_create": (c_status, [_P, POINTER(SessionOptions), _P, c_void_p,
                                        c_size_t, POINTER(_P)]),
    "ember_session_free": (None, [_P]),
    "ember_session_reset": (None, [_P]),
    "ember_session_position": (c_size_t, [_P]),
    "ember_tokenize_with_options": (c_status, [_P, c_char_p, c_size_t,
                                               POINTER(TokenizeOptions),
                                               POINTER(c_int32), c_size_t,
                                               POINTER(c_size_t)]),
    "ember_detokenize": (c_status, [_P, c_int32, c_int32, POINTER(c_void_p),
                                    POINTER(c_size_t)]),
    "ember_prefill": (c_status, [_P, POINTER(c_int32), c_size_t]),
    "ember_decode": (c_status, [_P, c_int32]),
    "ember_logits": (c_void_p, [_P]),
    "ember_logits_rows": (c_void_p, [_P, POINTER(c_size_t)]),
    "ember_attention": (c_void_p, [_P, POINTER(AttentionInfo)]),
    "ember_session_set_sampler": (c_status, [_P, POINTER(SamplerOptions)]),
    "ember_sample": (c_status, [_P, POINTER(c_int32)]),
    "ember_generate": (c_status, [_P, POINTER(c_int32), c_size_t, c_size_t,
                                  TokenCallback, c_void_p, POINTER(c_size_t)]),
    "ember_chat_template_render": (c_status, [_P, POINTER(ChatMessage), c_size_t,
                                              POINTER(ChatOptions), c_void_p, c_size_t,
                                              POINTER(c_size_t)]),
    "ember_chat_create": (c_status, [_P, POINTER(ChatOptions), POINTER(_P)]),
    "ember_chat_free": (None, [_P]),
    "ember_chat_set_system": (c_status, [_P, c_char_p, c_size_t]),
    "ember_chat_add": (c_status, [_P, c_char_p, c_char_p, c_size_t]),
    "ember_chat_generate": (c_status, [_P, c_size_t, TokenCallback, c_void_p,
                                       POINTER(c_size_t)]),
    "ember_chat_reset": (None, [_P]),
    "ember_chat_last_stats": (c_status, [_P, POINTER(ChatStats)]),
    "ember_chat_set_tools": (c_status, [_P, c_char_p, c_size_t]),
    "ember_chat_set_tool_grammar": (c_status, [_P, c_char_p, c_size_t]),
    "ember_chat_set_grammar": (c_status, [_P, c_char_p, c_size_t, POINTER(GrammarOptions)]),
    "ember_chat_tool_call_count": (c_status, [_P, POINTER(c_size_t),
                                              POINTER(ctypes.c_char_p)]),
    "ember_chat_tool_call": (c_status, [_P, c_size_t, POINTER(ToolCall)]),
    "ember_session_state_size": (c_size_t, [_P]),
    "ember_session_save_state": (c_status, [_P, c_void_p, c_size_t, POINTER(c_size_t)]),
    "ember_session_restore_state": (c_status, [_P, c_char_p, c_size_t]),
    "ember_session_set_grammar": (c_status, [_P, c_char_p, c_size_t,
                                             POINTER(GrammarOptions)]),
    "ember_session_grammar_complete": (c_int, [_P]),
    "ember_embed_options_default": (None, [POINTER(EmbedOptions)]),
    "ember_model_embedding_dims": (c_size_t, [_P]),
    "ember_model_labels": (c_size_t, [_P]),
    "ember_rerank": (c_status, [_P, c_char_p, c_size_t, POINTER(c_char_p), POINTER(c_size_t),
                                c_size_t, POINTER(ctypes.c_float)]),
    "ember_rerank_instructed": (c_status, [_P, c_char_p, c_size_t, c_char_p, c_size_t,
                                           POINTER(c_char_p), POINTER(c_size_t), c_size_t,
                                           POINTER(ctypes.c_float)]),
    "ember_embed_batch": (c_status, [_P, POINTER(c_char_p), POINTER(c_size_t), c_size_t,
                                     POINTER(EmbedOptions), POINTER(ctypes.c_float),
                                     c_size_t]),
    "ember_grammar_bytes": (c_status, [_P, c_char_p, c_size_t, POINTER(GrammarOptions),
                                       POINTER(c_size_t)]),
    "ember_json_schema_to_grammar": (c_status, [c_char_p, c_size_t, c_char_p,
                                                POINTER(c_size_t)]),
    "ember_json_schema_bytes": (c_status, [_P, c_char_p, c_size_t, POINTER(c_size_t)]),
    "ember_tool_grammar": (c_status, [_P, c_char_p, c_size_t, c_char_p, POINTER(c_size_t)]),
    "ember_chat_constrain_tools": (c_status, [_P]),
    "ember_session_set_json_schema": (c_status, [_P, c_char_p, c_size_t]),
    "ember_chat_set_json_schema": (c_status, [_P, c_char_p, c_size_t]),
    "ember_session_set_lookup": (c_status, [_P, c_uint32]),
    "ember_session_set_draft": (c_status, [_P, _P]),
    "ember_session_set_draft_max": (c_status, [_P, c_uint32]),
    "ember_session_speculative_stats": (c_status, [_P, POINTER(SpeculativeStats), c_int]),
    "ember_image_default": (None, [POINTER(Image)]),
    "ember_vision_options_default": (None, [POINTER(VisionOptions)]),
    "ember_model_has_vision": (c_int, [_P]),
    "ember_image_encoder_bytes": (c_size_t, [_P, POINTER(VisionOptions)]),
    "ember_image_encoder_create": (c_status, [_P, POINTER(VisionOptions), _P, c_void_p,
                                              c_size_t, POINTER(_P)]),
    "ember_image_encoder_free": (None, [_P]),
    "ember_image_encoder_add": (c_status, [_P, POINTER(Image), POINTER(c_size_t)]),
    "ember_chat_attach_image": (c_status, [_P, _P, c_size_t]),
    "ember_image_encoder_clear": (None, [_P]),
    "ember_image_encoder_images": (c_size_t, [_P]),
    "ember_image_encoder_rows": (c_void_p, [_P, POINTER(c_size_t)]),
    "ember_image_prompt_expand": (c_status, [_P, c_char_p, c_size_t, c_void_p, c_size_t,
                                             POINTER(c_size_t)]),
    "ember_prefill_images": (c_status, [_P, _P, POINTER(c_int32), c_size_t]),
}


def _candidates() -> list[str]:
    """Where the library may be: $EMBER_LIBRARY, the package's own copy, the system."""
    found = []
    if os.environ.get("EMBER_LIBRARY"):
        found.append(os.environ["EMBER_LIBRARY"])
    here = Path(__file__).resolve().parent / "_lib"
    found += [str(p) for p in sorted(here.glob("libember.so*"))]
    system = ctypes.util.find_library("ember")
    if system:
        found.append(system)
    return found


def _load() -> ctypes.CDLL:
    candidates = _candidates()
    if not candidates:
        raise ImportError(
            "ember: no libember shared library: install the package with "
            "`pip install --no-build-isolation ./python` (it builds one), or set "
            "EMBER_LIBRARY to a libember.so")
    lib = ctypes.CDLL(candidates[0])
    for name, (restype, argtypes) in _PROTOTYPES.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    for struct, fill in ((SessionOptions, lib.ember_session_options_default),
                         (SamplerOptions, lib.ember_sampler_options_default),
                         (TokenizeOptions, lib.ember_tokenize_options_default),
                         (ThreadpoolOptions, lib.ember_threadpool_options_default),
                         (ChatOptions, lib.ember_chat_options_default),
                         (GrammarOptions, lib.ember_grammar_options_default),
                         (EmbedOptions, lib.ember_embed_options_default),
                         (Image, lib.ember_image_default),
                         (VisionOptions, lib.ember_vision_options_default)):
        value = struct()
        fill(ctypes.byref(value))
        if value.struct_size != ctypes.sizeof(struct):
            raise ImportError(
                f"ember: {candidates[0]} has a {struct.__name__} of {value.struct_size} "
                f"bytes, these bindings {ctypes.sizeof(struct)}: versions differ")
    lib.path = candidates[0]
    return lib


lib = _load()


def defaults(struct: type, fill) -> ctypes.Structure:
    value = struct()
    fill(ctypes.byref(value))
    return value
