#!/usr/bin/env python3
"""ember's GBNF matcher against an independent reference (gbnf_reference.py).

For each of --count random grammars (seeded, so every run checks the same ones), and each
*.gbnf file in --grammars DIR, this writes the grammar and test strings (sentences, their
prefixes and mutations; one JSON string per line) to temporary files, runs

    EMBER grammar -g GRAMMAR --check STRINGS [--root NAME]

which prints complete, prefix or reject for each line, and compares with the reference's
answers. The reference is Python written from the format's definition with an Earley
parser, sharing no code or algorithm with ember's C++. Exits 0 when all agree, 1 on any
disagreement (printing the grammar, the string and both answers for the first few, and
keeping their files to rerun ember on).

--self-test checks the reference alone: hand-written cases with known answers, llama.cpp's
example grammars (/work/scratch/llama-grammars, or --grammars), and random grammars
against a second recognizer written here on the rules as written (sets of end positions
instead of Earley items, repetitions counted instead of rewritten). Standard library only.
"""
import argparse
import collections
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gbnf_reference import GrammarError, Recognizer, parse  # noqa: E402
from gbnf_random import random_grammar, random_strings, sentence  # noqa: E402

LLAMA_GRAMMARS = "/work/scratch/llama-grammars"
SHOWN = 3  # failing grammars printed in full, with up to 5 of their strings each


def indent(text):
    return "".join("    | " + line + "\n" for line in text.rstrip("\n").split("\n"))


def run_ember(command, gpath, spath, strings, root):
    """ember's words for `strings`, or (None, why it failed)."""
    # Random grammars are far more ambiguous than real ones: room for their parse stacks.
    cmd = command + ["grammar", "-g", gpath, "--check", spath, "--max-stacks", "16384",
                     "--max-frames", "1048576", "--max-expansion", "65535"]
    cmd += ["--root", root] if root != "root" else []
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{' '.join(cmd)}: {e}"
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        return None, f"{' '.join(cmd)} exited {proc.returncode}: {err}"
    # A matcher limit (parse stacks of a very ambiguous grammar: a stack machine's cost,
    # as llama.cpp's) is "limit", counted by the caller; any other error is a failure.
    words = ["limit" if w.startswith("error: grammar:") and " than " in w else w
             for w in proc.stdout.decode("utf-8", "replace").splitlines()]
    if len(words) != len(strings) or set(words) - {"complete", "prefix", "reject", "limit"}:
        return None, (f"{' '.join(cmd)}: expected {len(strings)} words complete/prefix/reject, "
                      f"got {len(words)}: {'; '.join(w for w in words if w.startswith('error'))[:300]} {err}")
    return words, None


def check(args):
    command = [a for a in args.emulator.split(",") if a] + [args.ember]
    rng = random.Random(args.seed)
    cases = []  # (label, text, grammar, root, strings)
    for k in range(args.count):
        text = random_grammar(rng)
        g, root = parse(text), "root"
        others = sorted(n for n in g.ast if n != "root" and n in g.productive)
        if k % 8 == 7 and others:  # now and then from another start rule
            root = rng.choice(others)
        cases.append((f"random grammar {k} (seed {args.seed})", text, g, root,
                      random_strings(g, rng, args.strings, root)))
    paths = sorted(glob.glob(os.path.join(args.grammars, "*.gbnf"))) if args.grammars else []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            g = parse(text)
        except GrammarError as e:
            print(f"FAILED: the reference cannot parse {path}: {e}")
            return 1
        if g.left_recursive():
            print(f"skipped {path}: left-recursive, which ember refuses")
            continue
        cases.append((path, text, g, "root", random_strings(g, rng, 3 * args.strings)))

    tmp = tempfile.mkdtemp(prefix="ember_grammar_check_")
    counts, mismatches, failures, python_time = collections.Counter(), 0, [], 0.0
    limited = 0  # strings past the matcher's limits, not compared
    for k, (label, text, g, root, strings) in enumerate(cases):
        started = time.process_time()
        expected = Recognizer(g, root).classify_many(strings)
        python_time += time.process_time() - started
        counts.update(expected)
        gpath, spath = os.path.join(tmp, f"case{k}.gbnf"), os.path.join(tmp, f"case{k}.jsonl")
        with open(gpath, "wb") as f:
            f.write(text.encode("utf-8"))
        with open(spath, "wb") as f:
            f.write("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in strings)
                    .encode("utf-8"))
        got, why = run_ember(command, gpath, spath, strings, root)
        limited += 0 if got is None else got.count("limit")
        bad = [] if got is None else [i for i in range(len(strings))
                                      if got[i] not in (expected[i], "limit")]
        if got is not None and not bad:
            os.remove(gpath)
            os.remove(spath)
            continue
        failures.append(label)
        mismatches += len(bad)
        if len(failures) > SHOWN:
            continue
        print(f"FAILED on {label}, root '{root}', grammar {gpath}:\n{indent(text)}")
        if got is None:
            print(f"  {why}\n")
            continue
        for i in bad[:5]:
            print(f"  line {i + 1} of {spath}: {json.dumps(strings[i], ensure_ascii=False)}\n"
                  f"    reference: {expected[i]}, ember: {got[i]}")
        print(f"  ({len(bad)} of {len(strings)} strings differ)\n")
    total = sum(counts.values())
    print(f"{len(cases)} grammars, {total} strings (reference: {counts['complete']} complete, "
          f"{counts['prefix']} prefix, {counts['reject']} reject); Python took "
          f"{time.process_time():.1f} s, its Earley classify {python_time:.1f} s of it")
    print(f"{limited} strings past ember's matcher limits (not compared; at most 5% pass)")
    if limited > total // 20:
        failures.append(f"{limited} strings past the limits")
    if not failures:
        shutil.rmtree(tmp)
        print("ember agrees with the reference on every other string")
        return 0
    print(f"{mismatches} mismatching strings; {len(failures)} grammars failed: "
          f"{', '.join(failures[:10])}{' ...' if len(failures) > 10 else ''}\n"
          f"their grammar and string files are kept in {tmp}")
    return 1


class WrittenRules:
    """A second recognizer, for the self-test only: on the AST (rules as written), with
    ends(node, i) = the positions where a match of node starting at i can end, and
    viable(node, i) = whether s[i:] is the start of some string of node's language.
    Repetitions are counted, not rewritten. Needs a grammar without left recursion."""

    def __init__(self, grammar, root="root"):
        self.ast, self.root, self.filled = grammar.ast, root, set()
        changed = True
        while changed:  # rules whose language is not empty
            changed = False
            for name, body in self.ast.items():
                if name not in self.filled and self.nonempty(body):
                    self.filled.add(name)
                    changed = True

    def nonempty(self, node):
        kind = node[0]
        if kind == "chars":
            return bool(node[1].intervals())
        if kind == "lit":
            return True
        if kind == "ref":
            return node[1] in self.filled
        if kind == "alt":
            return any(all(self.nonempty(x) for x in seq) for seq in node[1])
        return node[2] == 0 or self.nonempty(node[1])

    def classify(self, s):
        self.s, self.n, self.memo = [ord(c) for c in s], len(s), {}
        ref = ("ref", self.root, 0)
        if self.n in self.ends(ref, 0):
            return "complete"
        return "prefix" if self.viable(ref, 0) else "reject"

    def after(self, node, positions):
        return set().union(*(self.ends(node, j) for j in positions))

    def ends(self, node, i):
        kind, s = node[0], self.s
        if kind == "chars":
            return {i + 1} if i < self.n and s[i] in node[1] else set()
        if kind == "lit":
            return {i + len(node[1])} if tuple(s[i:i + len(node[1])]) == node[1] else set()
        if kind == "ref":
            return self.memoised(("ends", node[1], i), lambda: self.ends(self.ast[node[1]], i))
        if kind == "alt":
            out = set()
            for seq in node[1]:
                cur = {i}
                for x in seq:
                    cur = self.after(x, cur)
                out |= cur
            return out
        _, x, lo, hi = node
        cur = {i}
        for _ in range(lo):
            cur = self.after(x, cur)
        out = set(cur)
        if hi is None:
            while cur:
                cur = self.after(x, cur) - out
                out |= cur
        else:
            for _ in range(hi - lo):
                cur = self.after(x, cur)
                out |= cur
        return out

    def viable(self, node, i):
        if i == self.n:
            return self.nonempty(node)
        kind, rest = node[0], tuple(self.s[i:])
        if kind == "chars":
            return len(rest) == 1 and rest[0] in node[1]
        if kind == "lit":
            return rest == node[1][:len(rest)]
        if kind == "ref":
            return self.memoised(("viable", node[1], i), lambda: self.viable(self.ast[node[1]], i))
        if kind == "alt":
            for seq in node[1]:
                cur = {i}
                for k, x in enumerate(seq):
                    if all(self.nonempty(y) for y in seq[k + 1:]) and \
                            any(self.viable(x, j) for j in cur):
                        return True
                    cur = self.after(x, cur)
                if self.n in cur:
                    return True
            return False
        _, x, lo, hi = node
        cur, seen, r = {i}, set(), 0
        while True:
            if r >= lo and self.n in cur:
                return True
            if (hi is None or r < hi) and any(self.viable(x, j) for j in cur):
                return True
            if hi is not None and r >= hi:
                return False
            nxt = self.after(x, cur)
            if r >= lo:
                seen |= cur
                nxt -= seen
            if not nxt:
                return False
            cur, r = nxt, r + 1

    def memoised(self, key, compute):
        if key not in self.memo:
            self.memo[key] = None  # a cycle back here would be left recursion
            self.memo[key] = compute()
        if self.memo[key] is None:
            raise RuntimeError(f"left recursion at {key}")
        return self.memo[key]


def llama(name):
    return ("file", name)


LEFT_RECURSIVE = 'root ::= root "+" num | num\nnum ::= [0-9]+'
# (grammar text or llama(file name), start rule, {string: expected class})
CASES = [
    (llama("json.gbnf"), "root", {'{"a": [1, 2.5e3, true]}': "complete", '{"a": ': "prefix",
                                  "{]": "reject", "": "prefix", "{} ": "complete", "{}  ": "reject",
                                  '{"é":"\\u00e9"}': "complete", '{"a":"\\u00g': "reject"}),
    (llama("list.gbnf"), "root", {"- a\n- b c\n": "complete", "- a": "prefix", "- \n": "reject",
                                  "": "prefix", "-": "prefix", "- a\u2028": "reject"}),
    (llama("list.gbnf"), "item", {"- x\n": "complete", "- x\n- y\n": "reject"}),
    (llama("arithmetic.gbnf"), "root", {"1+2= 3\n": "complete", "x1 = (y)\n": "complete",
                                        "(1+2": "prefix", "1+=": "reject", "1=2": "prefix"}),
    (llama("chess.gbnf"), "root", {"1. e4 e5\n2. Nf3 Nc6\n": "complete", "1. e4 e5\n": "prefix",
                                   "1. e9": "reject",
                                   "1. O-O-O O-O+\n10. a1=Q Kxb2#\n": "complete"}),
    (llama("japanese.gbnf"), "root", {"こんにちは 世界": "complete", "こんにちは ": "prefix",
                                      "hello": "reject"}),
    # left recursion and empty rules, which the reference must handle though ember refuses
    # the former
    (LEFT_RECURSIVE, "root",
     {"1+22+3": "complete", "1+": "prefix", "+1": "reject", "": "prefix", "12": "complete"}),
    ('root ::= a b "x"\na ::= | "a"\nb ::= a a', "root",
     {"x": "complete", "ax": "complete", "aaax": "complete", "aaaax": "reject", "aaa": "prefix"}),
    ("e ::= e e | | \"(\" e \")\"\nroot ::= e", "root", {"(()())()": "complete", "(()": "prefix",
                                                        ")": "reject", "": "complete"}),
    # unproductive rules and empty classes: no completion, so no viable prefix through them
    ('root ::= "a" dead | "b" ok\ndead ::= "x" dead\nok ::= [^\\x00-\\U0010FFFF] | "c" [z-a]?',
     "root", {"a": "reject", "ax": "reject", "b": "prefix", "bc": "complete", "": "prefix"}),
    ('root ::= "a" root', "root", {"": "reject", "a": "reject"}),
    ('root ::= "a" [\\uD800-\\uDFFF] | "b"', "root", {"a": "reject", "b": "complete"}),
    # repetitions (a literal repeats whole), stacked postfixes, no space between items
    ('root ::= "ab"{2,3} "c"{2} "d"{1,} "e"{0,2} "f"{ 0 , 1 } "g"{0}', "root",
     {"ababccd": "complete", "abababccdddee": "complete", "ababababccd": "reject",
      "ababc": "prefix", "ababccdeee": "reject", "ababccdf": "complete", "ababccdg": "reject"}),
    ('root ::= "ab"* "c" ("x" | "y"){2}\n', "root", {"ababcxy": "complete", "abac": "reject",
                                                     "cy": "prefix", "cyyy": "reject"}),
    ('root ::= "a"+? "b"', "root", {"b": "complete", "aaab": "complete", "aa": "prefix"}),
    ('root ::= "a"[b]x"c"(x)\nx::="d"', "root", {"abdcd": "complete", "abd": "prefix"}),
    # escapes, classes, "." and what is not a comment
    ('root ::= "\\x41\\u00e9\\U0001F600\\t\\"\\\\\\n\\r" [\\[\\]] "#" # a comment "x"', "root",
     {'Aé😀\t"\\\n\r[#': "complete", 'Aé😀\t"\\\n\r]#': "complete", "A\\": "reject"}),
    ('root ::= [^a-c] . [a-] [-z] [\\x2D^]', "root",
     {"d!a-^": "complete", "d!--^": "complete", "d!-z-": "complete", "a": "reject", "d!b": "reject",
      "é😀": "prefix", "d\n": "prefix"}),
    ('root ::= [ぁ-ゟ]+ "é"', "root", {"ぁゟé": "complete", "ぁe": "reject"}),
    # newlines: after '::=', after '|', inside parentheses; comments between rules
    ('# head\n\nroot ::=\n  "a" |\n  "b" # end\n\n# tail', "root",
     {"a": "complete", "b": "complete"}),
    ('root ::= ( "a" # one\n  "b"\n  | "c"\n)\n', "root",
     {"ab": "complete", "c": "complete", "a": "prefix"}),
    ('root ::= | "x" |  | "y"', "root", {"": "complete", "x": "complete", "xy": "reject"}),
    ('root ::= "x" ()', "root", {"x": "complete"}),
]

# (grammar text, line, column, part of the reason)
ERRORS = [
    ("root ::= foo", 1, 10, "undefined rule 'foo'"),
    ('root ::= "a"\n\nother ::= "b" (root\n  | foo-bar)', 4, 5, "undefined rule 'foo-bar'"),
    ('item ::= "a"', 1, 1, "no rule named 'root'"),
    ('root ::= "abc', 1, 10, "unterminated string"),
    ('root ::= "a"\nx ::= "a" [abc', 2, 11, "unterminated character class"),
    ('root ::= "a\\qb"', 1, 12, "unknown escape '\\q'"),
    ('root ::= [\\-]', 1, 11, "unknown escape '\\-'"),
    ('root ::= "\\x4"', 1, 11, "\\x needs 2 hex digits"),
    ('root ::= "\\u12G4"', 1, 11, "\\u needs 4 hex digits"),
    ('root ::= "a"{3,2}', 1, 13, "maximum below minimum"),
    ('root ::= "a"{,2}', 1, 13, "bad repetition"),
    ('root ::= "a"{2', 1, 13, "bad repetition"),
    ('root ::= "a"\n  | "b"', 2, 3, "expected a rule name"),
    ('root ::= "a" ::= "b"', 1, 14, "unexpected ':'"),
    ('root ::= "a"[b]x"c"(x)x::="d"', 1, 24, "unexpected ':'"),
    ('root ::= "a"\nroot ::= "b"', 2, 1, "defined twice"),
    ('root ::= ( "a"\n  "b"', 1, 10, "unclosed '('"),
    ('root ::= ( "a" ]', 1, 16, "expected ')'"),
    ('root "a"', 1, 6, "expected '::='"),
]


def self_test(grammars_dir):
    grammars_dir = grammars_dir or LLAMA_GRAMMARS
    failed = []

    def expect(ok, what):
        if not ok:
            failed.append(what)
            print("FAIL:", what)

    def load(source):
        if isinstance(source, tuple):
            with open(os.path.join(grammars_dir, source[1]), encoding="utf-8") as f:
                return f.read()
        return source

    sys.setrecursionlimit(20000)
    files = sorted(glob.glob(os.path.join(grammars_dir, "*.gbnf")))
    if not files:
        print(f"SKIPPED the cases on llama.cpp's grammars: no *.gbnf in {grammars_dir}")
    cases = [c for c in CASES if files or not isinstance(c[0], tuple)]
    for source, root, answers in cases:
        g = parse(load(source), root)
        rec, written = Recognizer(g, root), None if g.left_recursive() else WrittenRules(g, root)
        for s, want in answers.items():
            got = rec.classify(s)
            expect(got == want, f"{source!r} root {root}: {s!r} is {got}, expected {want}")
            if written:
                got = written.classify(s)
                expect(got == want, f"second recognizer: {source!r}: {s!r} is {got}, "
                                    f"expected {want}")
    expect(parse(LEFT_RECURSIVE).left_recursive() == {"root"}, "left recursion not found")
    for text, line, column, reason in ERRORS:
        try:
            parse(text)
            expect(False, f"{text!r} parsed: expected {line}:{column}: {reason}")
        except GrammarError as e:
            expect((e.line, e.column) == (line, column) and reason in str(e)
                   and str(e).startswith(f"{line}:{column}: "),
                   f"{text!r}: got '{e}', expected {line}:{column}: ...{reason}...")
    print(f"{sum(len(c[2]) for c in cases)} hand-written strings, {len(ERRORS)} bad grammars")

    rng = random.Random(1)
    for path in files:
        with open(path, encoding="utf-8") as f:
            g = parse(f.read())
        rec, written = Recognizer(g), WrittenRules(g)
        expect(not g.left_recursive(), f"{path}: left recursion found")
        sentences = [sentence(g, rng, budget=rng.randint(5, 80)) for _ in range(20)]
        prefixes = [s[:rng.randint(0, len(s))] for s in sentences]
        classes = rec.classify_many(sentences + prefixes)
        expect(classes[:20] == ["complete"] * 20, f"{path}: a sentence is not complete")
        expect("reject" not in classes[20:], f"{path}: a prefix of a sentence is rejected")
        for s in random_strings(g, rng, 40):
            expect(rec.classify(s) == written.classify(s), f"{path}: recognizers differ on {s!r}")
        print(f"{os.path.basename(path)}: parses, {len(g.ast)} rules, sentences complete, "
              f"e.g. {json.dumps(sentences[0], ensure_ascii=False)[:60]}")

    counts, start = collections.Counter(), time.process_time()
    for k in range(60):
        text = random_grammar(rng)
        g = parse(text)
        rec, written = Recognizer(g), WrittenRules(g)
        strings = random_strings(g, rng, 40)
        classes = rec.classify_many(strings)
        counts.update(classes)
        for s, c in zip(strings, classes):
            w = written.classify(s)
            expect(c == w, f"random grammar {k}: {s!r} is {c}, second recognizer says {w}\n{text}")
            if c == "reject":
                expect(rec.classify(s + "a") == "reject", f"random {k}: {s!r}+a not rejected")
            elif s:
                expect(rec.classify(s[:-1]) != "reject", f"random {k}: {s[:-1]!r} rejected")
        for _ in range(5):
            s = sentence(g, rng, budget=30)
            expect(rec.classify(s) == "complete", f"random {k}: sentence {s!r} not complete")
    expect(min(counts.values()) > 100 and len(counts) == 3, f"too few of a class: {counts}")
    print(f"60 random grammars: the two recognizers agree on {sum(counts.values())} strings "
          f"({dict(counts)}) in {time.process_time() - start:.1f} s")
    print("self-test", "FAILED" if failed else "passed")
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ember", help="the ember binary")
    p.add_argument("--grammars", help="a directory of *.gbnf files to check too")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=200, help="random grammars")
    p.add_argument("--strings", type=int, default=30, help="test strings per random grammar")
    p.add_argument("--emulator", default="", help="comma-separated command to run ember under")
    p.add_argument("--self-test", action="store_true", help="check the reference alone")
    args = p.parse_args()
    if args.self_test:
        return self_test(args.grammars)
    if not args.ember:
        p.error("--ember is required (or --self-test)")
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
