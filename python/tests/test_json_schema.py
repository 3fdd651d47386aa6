"""JSON Schema through the Python package (ember.json_schema_to_grammar,
Session.set_json_schema, Chat.set_json_schema, Model.json_schema_bytes) on stories260K:
the runtime converts what the CLI converts, refusals say where and what, and greedy
generation under a schema is JSON the schema accepts.

Run by ctest's python_test with test_ember.py (the same environment)."""
import json
import os
import subprocess

import pytest

import ember

CLI = os.environ["EMBER_CLI"]
MODEL = os.environ["EMBER_TEST_MODEL"]
CHAT_MODEL = os.environ["EMBER_TEST_CHAT_MODEL"]

PERSON = {"type": "object",
          "properties": {"name": {"type": "string", "maxLength": 8},
                         "age": {"type": "integer", "minimum": 1, "maximum": 99},
                         "pet": {"enum": ["cat", "dog", None]}},
          "required": ["name", "age"]}


def follows_person(text: str) -> None:
    value = json.loads(text)
    assert isinstance(value, dict), text
    assert set(value) <= {"name", "age", "pet"} and {"name", "age"} <= set(value), text
    assert isinstance(value["name"], str) and len(value["name"]) <= 8, text
    assert isinstance(value["age"], int) and 1 <= value["age"] <= 99, text
    assert value.get("pet", "cat") in ("cat", "dog", None), text


@pytest.fixture(scope="module")
def model():
    with ember.Model(MODEL) as m:
        yield m


def test_the_runtime_converts_what_the_cli_converts(tmp_path):
    path = tmp_path / "person.json"
    path.write_text(json.dumps(PERSON))
    printed = subprocess.run([CLI, "grammar", "--json-schema", str(path)], check=True,
                             capture_output=True).stdout.decode()
    gbnf = ember.json_schema_to_grammar(PERSON)
    assert gbnf.startswith("root ::= ws value-root ws\n")
    assert printed.rstrip("\n") == gbnf.rstrip("\n")
    # Text, bytes and a dict are the same schema.
    assert ember.json_schema_to_grammar(json.dumps(PERSON)) == gbnf
    assert ember.json_schema_to_grammar(json.dumps(PERSON).encode()) == gbnf
    assert "value" in ember.json_schema_to_grammar(True)


def test_refusals_say_where_and_what():
    with pytest.raises(ember.EmberError, match=r"not valid JSON at byte 9") as e:
        ember.json_schema_to_grammar('{"type": }')
    assert e.value.status == "invalid argument"
    with pytest.raises(ember.EmberError,
                       match=r"at '/properties/code': keyword 'pattern' is not supported"
                       ) as e:
        ember.json_schema_to_grammar(
            {"properties": {"code": {"type": "string", "pattern": "[A-Z]+"}}})
    assert e.value.status == "unimplemented"
    with pytest.raises(TypeError, match="dict or its JSON text"):
        ember.json_schema_to_grammar([{"type": "string"}])


def test_a_session_follows_a_schema(model):
    need = model.json_schema_bytes(PERSON)
    assert need == model.grammar_bytes(ember.json_schema_to_grammar(PERSON))
    session = ember.Session(model, context=512, grammar_bytes=need)
    session.set_sampler(temperature=0.0)
    session.set_json_schema(PERSON)
    text = session.generate("Once upon a time", max_new=400)
    follows_person(text)
    assert session.grammar_complete
    with pytest.raises(ember.EmberError, match="keyword 'not'"):
        session.set_json_schema({"not": {}})
    session.set_json_schema(None)
    session.reset()
    assert not session.generate("Once upon a time", max_new=8).startswith("{")
    # Without room planned for it, the grammar is refused naming its bytes.
    with pytest.raises(ember.EmberError, match="planned 0"):
        ember.Session(model, context=64).set_json_schema(PERSON)


def test_a_chat_follows_a_schema():
    with ember.Model(CHAT_MODEL) as chat_model:
        need = chat_model.json_schema_bytes(PERSON)
        session = ember.Session(chat_model, context=512, grammar_bytes=need)
        session.set_sampler(temperature=0.0)
        chat = ember.Chat(session)
        chat.set_json_schema(json.dumps(PERSON))
        follows_person(chat.send("Who are you?", max_new=400))
        chat.set_json_schema(None)
