"""Speculative decoding from Python (ember_speculative.h) on stories260K: greedy
generation with prompt lookup and with a draft session gives the token ids of plain
decoding, the counts add up, a draft session stays alive while attached, and what the
C API refuses raises EmberError with its message.

Run by ctest as part of python_test (tests/CMakeLists.txt), which sets EMBER_LIBRARY,
EMBER_CLI and EMBER_TEST_MODEL (the converted stories260K).
"""
import ctypes
import gc
import os
import subprocess
import weakref

import pytest

import ember
from ember import _capi
from ember._capi import lib

CLI = os.environ["EMBER_CLI"]
MODEL = os.environ["EMBER_TEST_MODEL"]
# Said twice, so that prompt lookup finds n-grams from the start.
PROMPT = "Once upon a time, there was a little girl named Lily. " * 2
MAX_NEW = 80


@pytest.fixture(scope="module")
def model():
    with ember.Model(MODEL) as m:
        yield m


def generate_ids(session: ember.Session, prompt, max_new: int = MAX_NEW) -> list:
    """The token ids ember_generate hands its callback (Session.generate returns text)."""
    ids = []

    def on_token(user, token, data, length):
        ids.append(token)
        return 1

    callback = _capi.TokenCallback(on_token)
    prompt_ids = (ctypes.c_int32 * len(prompt))(*prompt)
    generated = ctypes.c_size_t()
    status = lib.ember_generate(session.handle, prompt_ids, len(prompt), max_new, callback,
                                None, ctypes.byref(generated))
    assert status == 0, lib.ember_last_error()
    assert generated.value == len(ids)
    return ids


@pytest.fixture(scope="module")
def plain(model):
    """Plain greedy decoding: the prompt's ids, the generated ids, the final position."""
    session = ember.Session(model, context=256)
    prompt = session.tokenize(PROMPT)
    ids = generate_ids(session, prompt)
    assert len(ids) == MAX_NEW
    return prompt, ids, session.position


def test_lookup_gives_plain_greedy_tokens(model, plain):
    prompt, expected, position = plain
    session = ember.Session(model, context=256, draft_max=6)
    assert session.speculative_stats() == ember.SpeculativeStats()  # nothing set yet
    session.set_lookup(3)
    assert generate_ids(session, prompt) == expected
    assert session.position == position
    stats = session.speculative_stats()
    assert isinstance(stats, ember.SpeculativeStats)
    assert stats.rounds + stats.accepted == MAX_NEW - 1  # every token but the first
    assert stats.verified > 0 and stats.drafted >= stats.accepted > 0
    assert stats.draft_passes == 0  # no draft model
    assert stats.acceptance == pytest.approx(stats.accepted / stats.drafted)
    # reset=True returns the counts, then zeroes them.
    assert session.speculative_stats(reset=True) == stats
    assert session.speculative_stats() == ember.SpeculativeStats()
    assert ember.SpeculativeStats().acceptance == 0.0
    with pytest.raises(AttributeError):  # frozen
        stats.rounds = 0


def test_a_draft_session_of_the_same_model_has_every_draft_accepted(model, plain):
    prompt, expected, position = plain
    target = ember.Session(model, context=256, draft_max=6)
    draft = ember.Session(model, context=256)
    target.set_draft(draft)
    target.set_draft_max(4)
    alive = weakref.ref(draft)
    del draft
    gc.collect()
    assert alive() is not None  # the target holds it while attached
    assert generate_ids(target, prompt) == expected
    assert target.position == position
    stats = target.speculative_stats()
    assert stats.drafted > 0 and stats.accepted == stats.drafted
    assert stats.acceptance == 1.0
    assert stats.draft_passes > 0
    assert stats.rounds + stats.accepted == MAX_NEW - 1
    target.set_draft(None)  # detached: the target lets it go
    gc.collect()
    assert alive() is None
    target.reset()
    assert generate_ids(target, prompt) == expected  # plain again
    assert target.speculative_stats().draft_passes == stats.draft_passes


def test_refusals_raise_ember_s_message(model, tmp_path):
    plain = ember.Session(model, context=64)
    for call in (lambda: plain.set_lookup(3), lambda: plain.set_draft_max(2),
                 lambda: plain.set_draft(ember.Session(model, context=64))):
        with pytest.raises(ember.EmberError, match="draft_max") as error:
            call()
        assert error.value.status == "invalid argument"
    assert plain._draft is None
    with pytest.raises(ValueError, match="draft_max"):
        ember.Session(model, context=64, draft_max=-1)

    target = ember.Session(model, context=64, draft_max=4)
    with pytest.raises(ember.EmberError, match="planned for 1 to 4"):
        target.set_draft_max(5)
    with pytest.raises(ember.EmberError):
        target.set_lookup(9)
    with pytest.raises(ember.EmberError, match="itself"):
        target.set_draft(target)
    with pytest.raises(ember.EmberError, match="context"):
        target.set_draft(ember.Session(model, context=32))
    with pytest.raises(TypeError):
        target.set_draft(model)

    # Another vocabulary (a random Llama of 300 tokens against stories260K's 512).
    other_path = tmp_path / "other.ember"
    subprocess.run([CLI, "convert", "--synthetic", "custom", "--dim", "32", "--hidden", "64",
                    "--layers", "1", "--heads", "2", "--vocab", "300", "--ctx", "128",
                    "-o", str(other_path)], check=True, capture_output=True)
    good = ember.Session(model, context=64)
    target.set_draft(good)
    assert target._draft is good
    closed = ember.Session(model, context=64)
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        target.set_draft(closed)
    assert target._draft is good  # untouched
    with ember.Model(other_path) as other_model:
        other = ember.Session(other_model, context=64)
        with pytest.raises(ember.EmberError, match="300") as error:
            target.set_draft(other)
        assert error.value.status == "invalid argument"
    assert target._draft is None  # a refusal detaches the earlier draft, as in C
