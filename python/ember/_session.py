"""``Session``: a model's running state in one arena, and the NumPy views of it."""
from __future__ import annotations

import codecs
import os
import ctypes
import queue
import threading
import weakref
from typing import Iterable, Iterator, Optional, Sequence, Union

import numpy as np

from . import _capi
from ._base import _check, _Guard, _Handle, _ids
from ._schema import schema_bytes
from ._capi import lib
from ._model import Model
from ._reports import (AttentionSelection, SpeculativeStats, selection_of, set_selection,
                       speculative_stats)


_KV_TYPES = {"f32": 0, "f16": 1, "q8": 2}


def image_structs(images: Sequence) -> tuple:
    """C images for PNG or JPEG bytes, file paths, (height, width, 3) uint8 arrays or PIL
    images, and the Python objects they point into (keep them alive while they are
    used)."""
    keep = []
    structs = []
    for item in images:
        image = _capi.defaults(_capi.Image, lib.ember_image_default)
        if hasattr(item, "convert") and hasattr(item, "size"):  # a PIL image
            item = np.asarray(item.convert("RGB"))
        if isinstance(item, (str, os.PathLike)):
            with open(item, "rb") as f:
                item = f.read()
        if isinstance(item, (bytes, bytearray)):
            data = bytes(item)
            keep.append(data)
            image.bytes = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p)
            image.num_bytes = len(data)
        else:
            rgb = np.ascontiguousarray(item, dtype=np.uint8)
            if rgb.ndim != 3 or rgb.shape[2] != 3:
                raise ValueError(f"ember: an RGB image is (height, width, 3) uint8, "
                                 f"not {rgb.shape}")
            keep.append(rgb)
            image.rgb = rgb.ctypes.data
            image.height, image.width = rgb.shape[0], rgb.shape[1]
        structs.append(image)
    return structs, keep


class Session(_Handle):
    """A model's running state: its KV cache and buffers, in one arena sized here.

    context: positions the KV cache holds (0: the model's, if that session fits in
    4 GiB). threads: the thread pool's size. kv_type: "f32", "f16" or "q8".
    batch: tokens per prefill step (0: 64). all_logits: keep a row of logits for every
    position of a prefill step (``logits_of`` needs it). isa: the kernels' ISA tier
    ("native" by default, or a lesser one such as "avx2", "sse4", "neon").
    attention: record the attention weights for ``attention()``: True (every layer
    and head over the whole context), an ``AttentionSelection`` or a dict of its
    fields; the record lives in the arena (``arena_bytes`` counts it).
    grammar_bytes: arena bytes for a grammar (``Model.grammar_bytes(gbnf)`` tells what
    one needs); 0, the default: none, and ``set_grammar`` is refused naming its bytes.
    draft_max: drafted tokens verified per pass at most (1 to 32) for speculative
    decoding (``set_lookup``, ``set_draft``); 0, the default: none, and those are refused.
    """

    _kind = "session"

    def __init__(self, model: Model, *, context: int = 0, threads: int = 1,
                 kv_type: str = "f32", batch: int = 0, all_logits: bool = False,
                 isa: Optional[str] = None,
                 attention: Union[bool, AttentionSelection, dict, None] = False,
                 grammar_bytes: int = 0, draft_max: int = 0):
        if kv_type not in _KV_TYPES:
            raise ValueError(f"ember: kv_type {kv_type!r}: use one of {list(_KV_TYPES)}")
        self.model = model
        self._guard = _Guard()
        self._handle = None
        self._pool = None
        self._draft: Optional["Session"] = None  # attached by set_draft: kept alive
        options = _capi.defaults(_capi.SessionOptions, lib.ember_session_options_default)
        options.max_context = context
        options.max_batch = batch
        options.all_logits = int(all_logits)
        options.kv_type = _KV_TYPES[kv_type]
        if grammar_bytes < 0:
            raise ValueError(f"ember: grammar_bytes {grammar_bytes} is negative")
        options.grammar_bytes = grammar_bytes
        if draft_max < 0:
            raise ValueError(f"ember: draft_max {draft_max} is negative")
        options.draft_max = draft_max
        isa_name = isa.encode() if isa else None  # read only during the create call
        options.isa = isa_name
        selection = selection_of(attention)
        if selection is not None:
            set_selection(options, selection)
        if threads > 1:
            pool_options = _capi.defaults(_capi.ThreadpoolOptions,
                                          lib.ember_threadpool_options_default)
            pool_options.num_threads = threads
            self._pool = ctypes.c_void_p()
            _check(lib.ember_threadpool_create_with_options(ctypes.byref(pool_options),
                                                            ctypes.byref(self._pool)))
        handle = ctypes.c_void_p()
        try:
            _check(lib.ember_session_create(model.handle, ctypes.byref(options), self._pool,
                                            None, 0, ctypes.byref(handle)))
        finally:
            self._free_pool()  # the session keeps its pool alive
        self._handle = handle
        self._chats: "weakref.WeakSet" = weakref.WeakSet()
        self.arena_bytes = lib.ember_arena_bytes(model.handle, ctypes.byref(options))
        self.max_batch = batch or 64
        self.all_logits = all_logits
        self._vocab = model.vocab_size

    def _free_pool(self) -> None:
        if self._pool:
            lib.ember_threadpool_free(self._pool)
            self._pool = None

    def close(self) -> None:
        """Frees the session, its chats and its arena (views of its logits must not be
        used after)."""
        if getattr(self, "_handle", None):
            with self._guard:
                for chat in list(self._chats):
                    chat.close()
                self._free_encoder()
                lib.ember_session_free(self._handle)
                self._handle = None
                self._draft = None

    @property
    def position(self) -> int:
        """Positions of the context in use."""
        return lib.ember_session_position(self.handle)

    def reset(self) -> None:
        """Forgets the context: the next prefill starts at position 0."""
        with self._guard:
            lib.ember_session_reset(self.handle)

    def tokenize(self, text: str, *, add_bos: Optional[bool] = None,
                 parse_special: bool = False) -> list:
        """Token ids of ``text``: BOS first as the model's tokenizer says (or as add_bos
        says); control tokens written in the text are text unless parse_special."""
        data = text.encode("utf-8")
        options = _capi.defaults(_capi.TokenizeOptions, lib.ember_tokenize_options_default)
        options.add_bos = -1 if add_bos is None else int(add_bos)
        options.parse_special = int(parse_special)
        capacity = len(data) + 8
        with self._guard:
            while True:
                ids = (ctypes.c_int32 * capacity)()
                n = ctypes.c_size_t()
                status = lib.ember_tokenize_with_options(self.handle, data, len(data),
                                                         ctypes.byref(options), ids,
                                                         capacity, ctypes.byref(n))
                if status == 6 and n.value > capacity:  # more ids than room: retry
                    capacity = n.value
                    continue
                _check(status)
                return list(ids[:n.value])

    def detokenize(self, tokens: Iterable[int]) -> str:
        """The text of tokens (``Model.detokenize``)."""
        return self.model.detokenize(tokens)

    def prefill(self, tokens: Sequence[int]) -> None:
        """Runs the model over tokens at the current position and advances it."""
        ids = _ids(tokens)
        with self._guard:
            _check(lib.ember_prefill(self.handle, ids, len(ids)))

    def decode(self, token: int) -> None:
        """Runs the model over one token at the current position and advances it."""
        with self._guard:
            _check(lib.ember_decode(self.handle, token))

    def _view(self, address: int, rows: int) -> np.ndarray:
        buffer = (ctypes.c_float * (rows * self._vocab)).from_address(address)
        buffer._session = self  # the view keeps the session (and its arena) alive
        view = np.frombuffer(buffer, dtype=np.float32).reshape(rows, self._vocab)
        view.flags.writeable = False
        return view

    @property
    def logits(self) -> np.ndarray:
        """The last position's logits, float32 [vocab]: a read-only view of the arena
        that the next prefill or decode overwrites."""
        address = lib.ember_logits(self.handle)
        if not address:
            raise ValueError("ember: no logits yet: prefill first")
        return self._view(address, 1)[0]

    def logits_of(self, tokens: Sequence[int]) -> np.ndarray:
        """Prefills tokens and returns the logits of each, float32 [len(tokens), vocab]
        (needs ``all_logits=True``). Up to ``batch`` tokens, the rows are a read-only
        view of the arena (the next prefill or decode overwrites them); more are
        prefilled ``batch`` at a time and their rows copied."""
        if not self.all_logits:
            raise ValueError("ember: logits_of needs a Session(..., all_logits=True)")
        tokens = list(tokens)
        if not tokens:
            return np.zeros((0, self._vocab), dtype=np.float32)
        steps = []
        for start in range(0, len(tokens), self.max_batch):
            chunk = tokens[start:start + self.max_batch]
            self.prefill(chunk)
            rows = ctypes.c_size_t()
            address = lib.ember_logits_rows(self.handle, ctypes.byref(rows))
            assert rows.value == len(chunk), (rows.value, len(chunk))
            view = self._view(address, rows.value)
            steps.append(view if len(tokens) <= self.max_batch else view.copy())
        return steps[0] if len(steps) == 1 else np.concatenate(steps)

    def attention(self, tokens: Union[str, Sequence[int], None] = None) -> np.ndarray:
        """The recorded attention weights, float32 [layers, heads, query, key]: softmax
        probabilities, 0 where the mask hides a key (causal: key > query). A read-only
        view of the arena (no copy; it keeps the session alive), over the positions
        prefilled so far (at most the selection's max_positions); the next prefill or
        decode adds rows, and ``reset()`` starts them again. Layer and head i are the
        selection's first_layer + i and first_head + i (``attention_selection``).
        With ``tokens`` (text or ids), resets the session and prefills them first.
        Needs ``Session(..., attention=...)``."""
        if tokens is not None:
            ids = self.tokenize(tokens) if isinstance(tokens, str) else list(tokens)
            self.reset()
            self.prefill(ids)
        info = _capi.AttentionInfo()
        info.struct_size = ctypes.sizeof(info)
        address = lib.ember_attention(self.handle, ctypes.byref(info))
        if not address:
            _check(1)  # EMBER_INVALID_ARGUMENT, with ember's message
        p = info.positions
        shape = (info.num_layers, info.num_heads, p, p)
        buffer = (ctypes.c_float * (shape[0] * shape[1] * p * p)).from_address(address)
        buffer._session = self  # the view keeps the session (and its arena) alive
        whole = np.frombuffer(buffer, dtype=np.float32).reshape(shape)
        whole.flags.writeable = False
        return whole[:, :, :info.rows, :info.rows]

    @property
    def attention_selection(self) -> AttentionSelection:
        """What the session records, resolved: first layer and head, how many of each,
        and the positions (EmberError when it records none)."""
        info = _capi.AttentionInfo()
        info.struct_size = ctypes.sizeof(info)
        if not lib.ember_attention(self.handle, ctypes.byref(info)):
            _check(1)  # EMBER_INVALID_ARGUMENT, with ember's message
        return AttentionSelection(info.first_layer, info.num_layers, info.first_head,
                                  info.num_heads, info.positions)

    def top_k(self, k: int = 10) -> list:
        """The k likeliest next tokens after the last position: (id, text,
        probability) with probabilities of the softmax over all logits, likeliest first."""
        logits = self.logits.astype(np.float64)
        probabilities = np.exp(logits - logits.max())
        probabilities /= probabilities.sum()
        best = np.argsort(-logits, kind="stable")[:k]
        return [(int(t), self.model.token_bytes(int(t)).decode("utf-8", "replace"),
                 float(probabilities[t])) for t in best]

    def set_sampler(self, *, temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0,
                    min_p: float = 0.0, seed: int = 0, repeat_penalty: float = 1.0,
                    repeat_last_n: int = 64, frequency_penalty: float = 0.0,
                    presence_penalty: float = 0.0, stop: Sequence[str] = ()) -> None:
        """How ``sample``, ``generate`` and ``stream`` pick tokens (temperature 0:
        greedy, the default); ``stop`` strings end generation."""
        options = _capi.defaults(_capi.SamplerOptions, lib.ember_sampler_options_default)
        options.temperature = temperature
        options.top_k = top_k
        options.top_p = top_p
        options.min_p = min_p
        options.seed = seed
        options.repeat_penalty = repeat_penalty
        options.repeat_last_n = repeat_last_n
        options.frequency_penalty = frequency_penalty
        options.presence_penalty = presence_penalty
        encoded = [s.encode("utf-8") for s in stop]
        array = (ctypes.c_char_p * max(1, len(encoded)))(*encoded)
        options.stop = ctypes.cast(array, ctypes.POINTER(ctypes.c_char_p))
        options.n_stop = len(encoded)
        with self._guard:
            _check(lib.ember_session_set_sampler(self.handle, ctypes.byref(options)))

    def sample(self) -> int:
        """A token drawn from the last position's logits by the session's sampler."""
        token = ctypes.c_int32()
        with self._guard:
            _check(lib.ember_sample(self.handle, ctypes.byref(token)))
        return token.value

    def save_state(self) -> bytes:
        """The session's state: position, the KV cache rows used, the tokens and the
        sampler's generator (``restore_state`` brings it back, in this session or
        another over the same model with the same kv_type)."""
        with self._guard:
            size = lib.ember_session_state_size(self.handle)
            buffer = ctypes.create_string_buffer(max(size, 1))
            written = ctypes.c_size_t()
            _check(lib.ember_session_save_state(self.handle, buffer, size,
                                                ctypes.byref(written)))
            return buffer.raw[:written.value]

    def restore_state(self, state: bytes) -> None:
        """Restores what ``save_state`` returned; a damaged or foreign state raises
        EmberError and leaves the session as it was. The next generate(None) or
        prefill continues after it."""
        with self._guard:
            _check(lib.ember_session_restore_state(self.handle, bytes(state), len(state)))

    def set_grammar(self, gbnf: Optional[str], root: Optional[str] = None) -> None:
        """Holds every later generation to a GBNF grammar (llama.cpp's format; None:
        no grammar). A malformed grammar raises EmberError naming line and column."""
        options = _capi.defaults(_capi.GrammarOptions, lib.ember_grammar_options_default)
        root_bytes = root.encode() if root else None
        options.root = root_bytes
        data = gbnf.encode("utf-8") if gbnf is not None else None
        with self._guard:
            _check(lib.ember_session_set_grammar(self.handle, data,
                                                 len(data) if data else 0,
                                                 ctypes.byref(options)))

    def set_json_schema(self, schema) -> None:
        """Holds every later generation to JSON that ``schema`` accepts: a dict or its
        JSON text, converted by ember (``ember.json_schema_to_grammar``); None: no
        grammar. Room for it: ``Session(grammar_bytes=model.json_schema_bytes(schema))``."""
        data = schema_bytes(schema) if schema is not None else None
        with self._guard:
            _check(lib.ember_session_set_json_schema(self.handle, data, len(data or b"")))

    def embed(self, texts: Union[str, Sequence[str]], *, dims: int = 0,
              normalize: Optional[bool] = None,
              prompt_name: Optional[str] = None) -> np.ndarray:
        """Embeddings of an embedding model (``Model.embedding_dims`` > 0): float32
        [dims] for one text, [len(texts), dims] for a list; the leading ``dims`` values
        (0: all), scaled to unit length as the model says (or as ``normalize`` says).
        ``prompt_name`` puts the model's named prompt before each text (as
        sentence-transformers' ``encode(prompt_name=...)``; None: the model's default
        prompt, if any; "": none). The vectors are written straight into the returned
        array."""
        single = isinstance(texts, str)
        items = [texts] if single else list(texts)
        width = dims or lib.ember_model_embedding_dims(self.model.handle)
        if width == 0:
            raise ValueError("ember: the model puts out logits, not embeddings")
        data = [t.encode("utf-8") for t in items]
        pointers = (ctypes.c_char_p * max(1, len(data)))(*data)
        lengths = (ctypes.c_size_t * max(1, len(data)))(*[len(d) for d in data])
        options = _capi.defaults(_capi.EmbedOptions, lib.ember_embed_options_default)
        options.dims = dims
        options.normalize = -1 if normalize is None else int(normalize)
        name = None if prompt_name is None else prompt_name.encode("utf-8")
        options.prompt_name = name  # kept alive by `name` until the call returns
        out = np.zeros((len(items), width), dtype=np.float32)
        with self._guard:
            _check(lib.ember_embed_batch(
                self.handle, pointers, lengths, len(items), ctypes.byref(options),
                out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), out.size))
        return out[0] if single else out

    def rerank(self, query: str, documents: Sequence[str],
               instruction: Optional[str] = None) -> np.ndarray:
        """A reranker's relevance of each document to the query (float32 logits, higher
        is more relevant), in the documents' order. `instruction`: the task, in the
        prompt of a reranker that has one (Qwen3-Reranker; None: the model's default)."""
        q = query.encode("utf-8")
        task = (instruction or "").encode("utf-8")
        data = [d.encode("utf-8") for d in documents]
        pointers = (ctypes.c_char_p * max(1, len(data)))(*data)
        lengths = (ctypes.c_size_t * max(1, len(data)))(*[len(d) for d in data])
        out = np.zeros(len(data), dtype=np.float32)
        with self._guard:
            _check(lib.ember_rerank_instructed(
                self.handle, task, len(task), q, len(q), pointers, lengths, len(data),
                out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))))
        return out

    def set_lookup(self, ngram: int) -> None:
        """Speculative decoding by prompt lookup: ``generate``, ``stream`` and chat replies
        draft what followed the last n-gram (up to ``ngram`` tokens, 1 to 8; 0: off) where
        the context has it and verify the drafts in one pass. Greedy text is exactly plain
        decoding's; sampled text keeps the model's distribution. Needs
        ``Session(draft_max=...)``."""
        with self._guard:
            _check(lib.ember_session_set_lookup(self.handle, ngram))

    def set_draft(self, draft: Optional["Session"]) -> None:
        """Speculative decoding with a draft model: ``draft`` is a session over a smaller
        model (or a lower-precision copy of this one) with the same vocabulary, and a
        context at least this one's; None detaches it. This session keeps a reference to
        it while attached; it must serve nothing else meanwhile (its position follows
        this session's), and close it only after detaching. A draft of another vocabulary
        raises EmberError naming the difference (and detaches any earlier draft). Needs
        ``Session(draft_max=...)``."""
        if draft is not None and not isinstance(draft, Session):
            raise TypeError(f"ember: set_draft takes a Session or None, not {draft!r}")
        draft_handle = draft.handle if draft is not None else None  # refuses a closed one
        with self._guard:
            self._draft = None  # a refusal detaches the earlier draft too
            _check(lib.ember_session_set_draft(self.handle, draft_handle))
            self._draft = draft

    def set_draft_max(self, draft_max: int) -> None:
        """Drafted tokens per verifying pass at most: 1 to the session's ``draft_max``
        (its default); the length in use adapts to the recent acceptance rate below it."""
        with self._guard:
            _check(lib.ember_session_set_draft_max(self.handle, draft_max))

    def speculative_stats(self, reset: bool = False) -> SpeculativeStats:
        """What speculative decoding drafted and accepted since the first ``set_lookup``
        or ``set_draft`` (or the last reset: ``reset=True`` zeroes the counts after
        reading them)."""
        raw = _capi.SpeculativeStats()
        with self._guard:
            _check(lib.ember_session_speculative_stats(self.handle, ctypes.byref(raw),
                                                       int(reset)))
        return speculative_stats(raw)

    @property
    def grammar_complete(self) -> bool:
        """Whether the last generation's text is a whole sentence of the grammar."""
        return bool(lib.ember_session_grammar_complete(self.handle))

    def prefill_images(self, prompt: str, images: Sequence) -> int:
        """Prefills a prompt with images (a vision model: ``Model.has_vision``): each
        image marker in ``prompt`` (Gemma 3: ``<start_of_image>``, as its chat template
        writes it) takes the next image; with none, the images go first. An image is
        PNG or JPEG bytes, a file path, an (height, width, 3) uint8 array or a PIL
        image. The prompt is expanded as the model's processor does and tokenized with
        special tokens read; each image's rows take its image tokens' places. Returns
        the prompt's tokens; ``generate(None)`` goes on from its logits."""
        if not lib.ember_model_has_vision(self.model.handle):
            raise ValueError("ember: the model has no vision tower: it takes no images")
        structs, keep = image_structs(images)  # keep: what they point into
        with self._guard:
            encoder = self._image_encoder(max(1, len(structs)))
            lib.ember_image_encoder_clear(encoder)
            for image in structs:
                _check(lib.ember_image_encoder_add(encoder, ctypes.byref(image), None))
            data = prompt.encode("utf-8")
            needed = ctypes.c_size_t()
            status = lib.ember_image_prompt_expand(encoder, data, len(data), None, 0,
                                                   ctypes.byref(needed))
            if status != 6:  # EMBER_RESOURCE_EXHAUSTED tells the size
                _check(status)
            out = ctypes.create_string_buffer(max(1, needed.value))
            _check(lib.ember_image_prompt_expand(encoder, data, len(data), out,
                                                 needed.value, ctypes.byref(needed)))
        ids = self.tokenize(out.raw[:needed.value].decode("utf-8"), parse_special=True)
        array = _ids(ids)
        with self._guard:
            _check(lib.ember_prefill_images(self.handle, encoder, array, len(array)))
        return ids

    def _image_encoder(self, images: int):
        """The session's image encoder, made (again) for at least ``images`` images."""
        if getattr(self, "_encoder", None) and self._encoder_images >= images:
            return self._encoder
        self._free_encoder()
        options = _capi.defaults(_capi.VisionOptions, lib.ember_vision_options_default)
        options.max_images = images
        encoder = ctypes.c_void_p()
        _check(lib.ember_image_encoder_create(self.model.handle, ctypes.byref(options),
                                              None, None, 0, ctypes.byref(encoder)))
        self._encoder, self._encoder_images = encoder, images
        return encoder

    def _free_encoder(self) -> None:
        if getattr(self, "_encoder", None):
            lib.ember_image_encoder_free(self._encoder)
            self._encoder = None

    def _prompt(self, prompt: Union[str, Sequence[int], None],
                images: Optional[Sequence] = None) -> ctypes.Array:
        if images:
            if not isinstance(prompt, str):
                raise ValueError("ember: images go with a text prompt")
            self.prefill_images(prompt, images)
            return (ctypes.c_int32 * 0)()
        if prompt is None:
            return (ctypes.c_int32 * 0)()
        if isinstance(prompt, str):
            return _ids(self.tokenize(prompt))
        return _ids(prompt)

    def _run(self, prompt: ctypes.Array, max_new: int, on_piece) -> int:
        """ember_generate with on_piece(bytes) -> bool (False stops); the guard held."""
        def callback(user, token, data, length):
            return 1 if on_piece(ctypes.string_at(data, length) if length else b"") else 0

        native = _capi.TokenCallback(callback)
        generated = ctypes.c_size_t()
        _check(lib.ember_generate(self.handle, prompt, len(prompt), max_new, native, None,
                                  ctypes.byref(generated)))
        return generated.value

    def generate(self, prompt: Union[str, Sequence[int], None] = None,
                 max_new: int = 128, *, images: Optional[Sequence] = None) -> str:
        """Prefills the prompt (text or token ids; None: go on from the last logits) and
        generates up to max_new tokens with the session's sampler; returns their text.
        Stops at the end of text or a stop string; EmberError when the context fills.
        With ``images``, the text prompt takes them as ``prefill_images`` says."""
        ids = self._prompt(prompt, images)
        pieces = []
        with self._guard:
            self._run(ids, max_new, lambda piece: pieces.append(piece) or True)
        return b"".join(pieces).decode("utf-8", "replace")

    def stream(self, prompt: Union[str, Sequence[int], None] = None,
               max_new: int = 128, *, images: Optional[Sequence] = None) -> Iterator[str]:
        """``generate`` as an iterator of text pieces (whole UTF-8 characters), produced
        as the tokens come. The session is busy until the iterator ends or is closed;
        breaking out of the loop stops generation at the next token."""
        ids = self._prompt(prompt, images)
        self._guard.__enter__()
        pieces: "queue.Queue" = queue.Queue(maxsize=1)
        stop = threading.Event()
        done = object()
        failure = []

        def on_piece(piece: bytes) -> bool:
            while not stop.is_set():
                try:
                    pieces.put(piece, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        def work() -> None:
            try:
                self._run(ids, max_new, on_piece)
            except BaseException as error:  # handed to the consumer
                failure.append(error)
            finally:
                while True:
                    try:
                        pieces.put(done, timeout=0.1)
                        break
                    except queue.Full:
                        if stop.is_set():
                            break

        worker = threading.Thread(target=work, name="ember-stream", daemon=True)
        worker.start()
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            while True:
                piece = pieces.get()
                if piece is done:
                    break
                text = decoder.decode(piece)
                if text:
                    yield text
            tail = decoder.decode(b"", final=True)
            if tail:
                yield tail
            if failure:
                raise failure[0]
        finally:
            stop.set()
            while worker.is_alive():
                try:
                    pieces.get(timeout=0.1)
                except queue.Empty:
                    pass
            worker.join()
            self._guard.__exit__(None, None, None)
