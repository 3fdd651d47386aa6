#!/usr/bin/env python3
"""ember's JSON Schema to GBNF conversion against the jsonschema package (Debian's
python3-jsonschema, Draft 2020-12) and Python's json module.

For each schema below (together they use every supported keyword), this runs

    EMBER grammar --json-schema SCHEMA          (prints the GBNF)

parses the grammar with gbnf_reference.py (the Python GBNF reader the grammar oracle
uses), draws --count random sentences from it, and checks each is JSON that the schema
accepts (formats by regular expressions written here: jsonschema does not check them
unless asked, and then checks the calendar, which a grammar does not). Then it runs

    EMBER grammar --json-schema SCHEMA --check TEXTS

on hand-written instances: the valid ones must be complete, the invalid ones (which the
schema refuses, checked here with jsonschema first) must not be. (The converse does not
hold by design: properties come in the schema's order, and other keys only where
additionalProperties allows them.) Unsupported keywords must be refused with a message
naming them. Exits 0 when all agree.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gbnf_random import sentence  # noqa: E402
from gbnf_reference import parse  # noqa: E402

import jsonschema  # noqa: E402

FORMATS = {
    "date": r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])",
    "time": r"([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
}
FORMATS["date-time"] = FORMATS["date"] + "T" + FORMATS["time"]

# (schema, valid instances, invalid instances)
CASES = [
    ({"type": "object",
      "properties": {
          "name": {"type": "string", "minLength": 1, "maxLength": 12},
          "age": {"type": "integer", "minimum": 0, "maximum": 150},
          "id": {"type": "string", "format": "uuid"},
          "tags": {"type": "array", "items": {"enum": ["red", "gr\"een", 3, None]},
                   "maxItems": 3},
          "when": {"type": "string", "format": "date-time"},
          "day": {"type": "string", "format": "date"},
          "at": {"type": "string", "format": "time"},
          "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}],
                    "items": False},
          "ok": {"type": "boolean"},
          "none": {"type": "null"},
      },
      "required": ["name", "age"]},
     ['{"name": "Al", "age": 30}',
      '{"name":"Al","age":150,"id":"123e4567-e89b-12d3-a456-426614174000"}',
      '{"name":"x","age":0,"tags":["red",3,null],"ok":true,"none":null}',
      '{"name":"x","age":7,"when":"2024-02-29T13:45:00.25+01:00","point":[1.5,-2e3]}',
      '{"name":"x","age":7,"day":"2024-12-31","at":"23:59:59Z","point":[]}'],
     ['{"name":"Al","age":151}', '{"name":"","age":1}', '{"age":7}',
      '{"name":"x","age":-1}',
      '{"name":"x","age":1,"tags":["blue"]}', '{"name":"x","age":1,"point":[1,2,3]}',
      '{"name":"x","age":1,"id":"123e4567"}', '{"name":"x","age":1.5}']),
    ({"$defs": {"node": {"type": "object",
                         "properties": {"value": {"type": "integer"},
                                        "next": {"anyOf": [{"type": "null"},
                                                           {"$ref": "#/$defs/node"}]}},
                         "required": ["value", "next"]}},
      "$ref": "#/$defs/node"},
     ['{"value": 1, "next": null}', '{"value":-2,"next":{"value":3,"next":null}}'],
     ['{"value": 1}', '{"value":1,"next":{"value":"a","next":null}}']),
    ({"type": "array", "items": {"type": "integer", "minimum": -120, "maximum": -7},
      "minItems": 2, "maxItems": 4},
     ['[-7, -120]', '[-99,-10,-8,-100]'], ['[-7]', '[-6, -7]', '[-121,-7]', '[1,2,3,4,5]']),
    ({"type": "integer", "exclusiveMinimum": 9, "exclusiveMaximum": 1001},
     ['10', '999', '1000'], ['9', '1001', '05', '-10']),
    ({"type": ["string", "null"], "maxLength": 3}, ['"abc"', 'null', '""'], ['"abcd"', '1']),
    ({"oneOf": [{"type": "object", "properties": {"kind": {"const": "a"},
                                                  "x": {"type": "number"}},
                 "required": ["kind"]},
                {"type": "object", "properties": {"kind": {"const": "b"},
                                                  "y": {"type": "string"}},
                 "required": ["kind", "y"]}]},
     ['{"kind":"a"}', '{"kind":"a","x":1.5e3}', '{"kind":"b","y":"z"}'],
     ['{"kind":"b"}', '{"kind":"c"}', '{"kind":"b","y":1}']),
    ({"type": "object", "properties": {"a": {"type": "integer"}},
      "additionalProperties": {"type": "string"}},
     ['{"a": 1, "zz": "q"}', '{"qq": "x"}', '{}', '{"aa": "x", "": ""}'],
     ['{"a": "x"}', '{"qq": 1}', '{"a": 1, "a": "x"}']),
    ({"type": "object", "properties": {"list": {"type": "array",
                                                "prefixItems": [{"const": "head"}],
                                                "items": {"type": "boolean"},
                                                "minItems": 2}}},
     ['{"list":["head",true]}', '{"list":["head",false,true,true]}', '{}'],
     ['{"list":["head"]}', '{"list":[true,true]}']),
    (True, ['1', '{"a":[null,"x"]}'], []),
    ({"allOf": [{"type": "string", "minLength": 2}]}, ['"ab"'], ['"a"']),
]

REFUSED = [
    ({"type": "string", "pattern": "^a+$"}, "pattern"),
    ({"type": "object", "patternProperties": {"a": {}}}, "patternProperties"),
    ({"type": "number", "minimum": 1.5}, "minimum or maximum on type number"),
    ({"type": "string", "format": "email"}, "format 'email'"),
    ({"allOf": [{"type": "string"}, {"maxLength": 2}]}, "allOf of more than one"),
    ({"$ref": "https://example.com/s.json"}, "$ref"),
    ({"type": "array", "maxItems": 100000}, "maxItems 100000"),
    ({"not": {"type": "null"}}, "'not'"),
    (False, "schema false"),
]


def run(ember, args, stdin=None):
    return subprocess.run([ember, "grammar"] + args, capture_output=True, text=True,
                          input=stdin)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ember", required=True)
    ap.add_argument("--count", type=int, default=200, help="sentences per schema")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    failures, sentences = 0, 0
    tmp = tempfile.mkdtemp()

    def fail(message):
        nonlocal failures
        failures += 1
        if failures <= 10:
            print("FAIL:", message)

    for number, (schema, valid, invalid) in enumerate(CASES):
        validator = jsonschema.Draft202012Validator(schema)
        path = os.path.join(tmp, "schema%d.json" % number)
        with open(path, "w") as f:
            json.dump(schema, f)
        out = run(a.ember, ["--json-schema", path])
        if out.returncode != 0:
            fail("schema %d does not convert: %s" % (number, out.stderr))
            continue
        grammar = parse(out.stdout)
        for _ in range(a.count):
            text = sentence(grammar, rng, budget=rng.randint(10, 120))
            sentences += 1
            try:
                value = json.loads(text)
            except ValueError as e:
                fail("schema %d: %r is not JSON (%s)" % (number, text, e))
                continue
            errors = list(validator.iter_errors(value))
            if errors:
                fail("schema %d: %r: %s" % (number, text, errors[0].message))
            for error in check_formats(schema, value, schema):
                fail("schema %d: %r: %s" % (number, text, error))
        for text in invalid:
            try:
                value = json.loads(text)
            except ValueError:
                continue  # not JSON: invalid
            if validator.is_valid(value) and not check_formats(schema, value, schema):
                fail("schema %d: the test's invalid %r is valid" % (number, text))
        for text in valid:
            if not validator.is_valid(json.loads(text)):
                fail("schema %d: the test's valid %r is invalid" % (number, text))
        texts = os.path.join(tmp, "texts%d.jsonl" % number)
        with open(texts, "w") as f:
            for text in valid + invalid:
                f.write(json.dumps(text) + "\n")
        out = run(a.ember, ["--json-schema", path, "--check", texts])
        verdicts = out.stdout.split("\n")
        for i, text in enumerate(valid + invalid):
            got = verdicts[i] if i < len(verdicts) else "(none: %s)" % out.stderr
            want_complete = i < len(valid)
            if (got == "complete") != want_complete:
                fail("schema %d: %r is %s" % (number, text, got))
        print("ok: schema %d: %d sentences, %d valid and %d invalid instances" %
              (number, a.count, len(valid), len(invalid)))

    for number, (schema, fragment) in enumerate(REFUSED):
        path = os.path.join(tmp, "refused%d.json" % number)
        with open(path, "w") as f:
            json.dump(schema, f)
        out = run(a.ember, ["--json-schema", path])
        if out.returncode == 0 or fragment not in out.stderr:
            fail("refused %d (%s): status %d, %s" % (number, fragment, out.returncode,
                                                     out.stderr.strip()))
    # Deep nesting is refused, not a crash.
    path = os.path.join(tmp, "deep.json")
    with open(path, "w") as f:
        f.write('{"items":' * 5000 + "{}" + "}" * 5000)
    out = run(a.ember, ["--json-schema", path])
    if out.returncode != 1 or "nested deeper" not in out.stderr:
        fail("deep schema: status %d, %s" % (out.returncode, out.stderr.strip()[:200]))

    print("%d sentences of %d schemas, %d refusals: %d failure(s)" %
          (sentences, len(CASES), len(REFUSED) + 1, failures))
    return 1 if failures else 0


def check_formats(schema, value, root, depth=0):
    """Errors of string formats in `value` under `schema` (following properties, items,
    prefixItems, $ref and anyOf/oneOf where the branch is unambiguous enough: every
    branch whose format fails is reported only if no branch accepts)."""
    if depth > 50 or not isinstance(schema, dict):
        return []
    if "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        return check_formats(root.get("$defs", {}).get(name, {}), value, root, depth + 1)
    errors = []
    if isinstance(value, str) and "format" in schema:
        if not re.fullmatch(FORMATS[schema["format"]], value):
            errors.append("%r is not a %s" % (value, schema["format"]))
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                errors += check_formats(sub, value[key], root, depth + 1)
    if isinstance(value, list):
        prefix = schema.get("prefixItems", [])
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else schema.get("items", {})
            errors += check_formats(sub, item, root, depth + 1)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            branches = [check_formats(b, value, root, depth + 1) for b in schema[key]]
            if all(branches):
                errors += branches[0]
    return errors


if __name__ == "__main__":
    sys.exit(main())
