"""Reference GBNF (llama.cpp's grammar format) for checking ember's grammar matcher.

Written from the format's definition (llama.cpp's grammars/README.md and the rules ember
states for what it accepts), not from llama.cpp's or ember's code, and with a different
algorithm from either: the text is parsed into rules over Unicode code points, groups and
repetitions are rewritten into plain BNF, and strings are recognised with an Earley parser,
which handles every context-free grammar (left recursion, empty rules, ambiguity). So a
disagreement with ember's C++ points at a bug in one of two unrelated implementations.

    g = parse(text)                      # GrammarError "LINE:COLUMN: reason" if bad
    Recognizer(g, root="root").classify(s)   # "complete" | "prefix" | "reject"

"complete": s is in the root rule's language; "prefix": it is not, but some continuation
makes it a sentence; "reject": neither. Code points are Unicode scalar values (surrogates,
which no UTF-8 text holds, match nothing). gbnf_random.py makes the test material for
check_grammar.py. Standard library only.
"""
import os
import re
import string

MAX_CP = 0x10FFFF
NAME_CHARS = frozenset(string.ascii_letters + string.digits + "-")
SIMPLE_ESCAPES = {"t": 9, "r": 13, "n": 10, "\\": 92, '"': 34, "[": 91, "]": 93}
HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_SPACE, _SPACE_NL = re.compile(r"(?:[ \t]|#[^\r\n]*)*"), re.compile(r"(?:[ \t\r\n]|#[^\r\n]*)*")
_NAME = re.compile(r"[a-zA-Z0-9-]+")
_COUNTS = re.compile(r"\{[ \t]*([0-9]+)[ \t]*(?:(,)[ \t]*([0-9]*)[ \t]*)?\}")


class GrammarError(ValueError):
    def __init__(self, reason, line, column):
        super().__init__(f"{line}:{column}: {reason}")
        self.reason, self.line, self.column = reason, line, column


class CharSet:
    """A terminal: one code point in `ranges` (inclusive pairs), or outside them if negated."""
    __slots__ = ("negated", "ranges", "_intervals")

    def __init__(self, negated, ranges):
        self.negated, self.ranges, self._intervals = negated, tuple(ranges), None

    def __contains__(self, cp):
        for lo, hi in self.ranges:
            if lo <= cp <= hi:
                return not self.negated
        return self.negated

    def intervals(self):
        """The scalar values matched, as sorted disjoint (lo, hi) pairs; () if none."""
        if self._intervals is None:  # membership is constant between consecutive cuts
            cuts = {0, 0xD800, 0xE000, MAX_CP + 1}
            cuts.update(x for lo, hi in self.ranges for x in (lo, hi + 1) if 0 <= x <= MAX_CP)
            cuts = sorted(cuts)
            self._intervals = tuple((a, b - 1) for a, b in zip(cuts, cuts[1:])
                                    if a in self and not 0xD800 <= a <= 0xDFFF)
        return self._intervals

    def sample(self, rng, pool=()):
        """A random code point of the set (which must not be empty), often one of `pool`."""
        hits = [cp for cp in pool if cp in self]
        if hits and rng.random() < 0.7:
            return rng.choice(hits)
        lo, hi = rng.choice(self.intervals())
        return rng.randint(lo, hi if rng.random() < 0.2 else min(hi, lo + 300))


ANY = CharSet(True, ())


# ---------------------------------------------------------------------------------------
# Parsing. AST nodes: ("chars", CharSet) for a class or ".", ("lit", code points),
# ("ref", name, offset), ("alt", [sequence, ...]) for a rule body or group (a sequence is
# a list of nodes), ("rep", node, min, max or None).

class _Parser:
    def __init__(self, text):
        self.t, self.i, self.refs = text, 0, []

    def error(self, reason, at=None):
        at = self.i if at is None else at
        line = self.t.count("\n", 0, at) + 1
        return GrammarError(reason, line, at - (self.t.rfind("\n", 0, at) + 1) + 1)

    def peek(self):
        return self.t[self.i:self.i + 1]

    def skip(self, newlines=False):
        """Skip spaces, tabs and comments, and newlines too if `newlines`."""
        self.i = (_SPACE_NL if newlines else _SPACE).match(self.t, self.i).end()

    def grammar(self):
        rules = {}
        self.skip(True)
        while self.i < len(self.t):
            start, m = self.i, _NAME.match(self.t, self.i)
            if not m:
                raise self.error(f"expected a rule name, found {self.peek()!r}")
            self.i = m.end()
            self.skip()
            if not self.t.startswith("::=", self.i):
                raise self.error("expected '::=' after the rule name")
            self.i += 3
            self.skip(True)  # the body may start on the next line
            body = self.alternatives(nested=False)
            if self.peek() not in ("", "\r", "\n"):
                raise self.error(f"unexpected {self.peek()!r} (a rule ends at a newline)")
            if m.group() in rules:
                raise self.error(f"rule '{m.group()}' defined twice", start)
            rules[m.group()] = body
            self.skip(True)
        for _, name, at in self.refs:
            if name not in rules:
                raise self.error(f"undefined rule '{name}'", at)
        return rules

    def alternatives(self, nested):
        alts = [self.sequence(nested)]
        while self.peek() == "|":
            self.i += 1
            self.skip(True)  # a newline after '|' continues the rule
            alts.append(self.sequence(nested))
        return ("alt", alts)

    def sequence(self, nested):
        """Items up to what cannot start one; newlines between them only if `nested`."""
        seq = []
        while True:
            c, start, name = self.peek(), self.i, _NAME.match(self.t, self.i)
            if c == '"':
                node = ("lit", tuple(lo for lo, _ in self.quoted('"', "string literal")[1]))
            elif c == "[":
                node = ("chars", CharSet(*self.quoted("]", "character class")))
            elif c == ".":
                self.i += 1
                node = ("chars", ANY)
            elif c == "(":
                self.i += 1
                self.skip(True)
                node = self.alternatives(nested=True)
                if not self.peek():
                    raise self.error("unclosed '('", start)
                if self.peek() != ")":
                    raise self.error(f"expected ')', found {self.peek()!r}")
                self.i += 1
            elif name:
                node = ("ref", name.group(), start)
                self.refs.append(node)
                self.i = name.end()
            else:
                return seq
            self.skip(nested)
            while self.peek() and self.peek() in "*+?{":  # they stack: "a"+? is ("a"+)?
                op, m = self.peek(), _COUNTS.match(self.t, self.i)
                if op != "{":
                    lo, hi, self.i = int(op == "+"), 1 if op == "?" else None, self.i + 1
                elif not m:
                    raise self.error("bad repetition: expected {m}, {m,} or {m,n}")
                else:
                    lo, self.i = int(m[1]), m.end()
                    hi = lo if not m[2] else int(m[3]) if m[3] else None
                    if hi is not None and hi < lo:
                        raise self.error(f"repetition {m[0]}: maximum below minimum", m.start())
                node = ("rep", node, lo, hi)
                self.skip(nested)
            seq.append(node)

    def quoted(self, close, what):
        """(negated, [(lo, hi), ...]): the code points of a literal or class up to `close`;
        a class may start with ^ and have ranges lo-hi."""
        start, pairs = self.i, []
        self.i += 1
        negated = close == "]" and self.peek() == "^"
        self.i += negated
        while self.peek() != close:
            if not self.peek():
                raise self.error(f"unterminated {what}", start)
            lo = hi = self.char()
            # a range unless the '-' is last (followed by ']' or the end of the text)
            if close == "]" and self.peek() == "-" and self.t[self.i + 1:self.i + 2] not in "]":
                self.i += 1
                hi = self.char()
            pairs.append((lo, hi))
        self.i += 1
        return negated, pairs

    def char(self):
        """One code point of a literal or class: an escape or a character as it is."""
        c, e, start = self.t[self.i], self.t[self.i + 1:self.i + 2], self.i
        if c != "\\":
            self.i += 1
            return ord(c)
        if e in HEX_ESCAPES:
            digits = self.t[self.i + 2:self.i + 2 + HEX_ESCAPES[e]]
            if len(digits) != HEX_ESCAPES[e] or any(d not in string.hexdigits for d in digits):
                raise self.error(f"\\{e} needs {HEX_ESCAPES[e]} hex digits", start)
            self.i += 2 + len(digits)
            return int(digits, 16)
        if e not in SIMPLE_ESCAPES:
            raise self.error(f"unknown escape '\\{e}'" if e else "'\\' at the end", start)
        self.i += 2
        return SIMPLE_ESCAPES[e]


def parse(text, root="root"):
    """Parse GBNF text into a Grammar; GrammarError if it is bad or has no rule `root`."""
    p = _Parser(text)
    grammar = Grammar(p.grammar())
    if root is not None and root not in grammar.ast:
        raise GrammarError(f"no rule named '{root}'", 1, 1)
    return grammar


class Grammar:
    """`ast`: rule name -> ("alt", ...) as written. `rules`: the same language as plain BNF,
    name -> list of alternatives, each a tuple of symbols (a str names a rule, a CharSet is
    a terminal); groups and repetitions become helper rules 'owner#n' ('#' is no name char):
    X* is H ::= | X H, and X{m,n} is m copies of X then nested optionals."""

    def __init__(self, ast):
        self.ast, self.rules, self._count = ast, {}, 0
        for name, body in ast.items():
            self._owner = name
            self.rules[name] = [tuple(self._sequence(seq)) for seq in body[1]]
        self._analyse()

    def _helper(self, alts):
        name = f"{self._owner}#{self._count}"
        self._count += 1
        self.rules[name] = alts
        return name

    def _sequence(self, seq):
        return [sym for node in seq for sym in self._node(node)]

    def _node(self, node):
        kind = node[0]
        if kind == "chars":
            return [node[1]]
        if kind == "lit":
            return [CharSet(False, [(cp, cp)]) for cp in node[1]]
        if kind == "ref":
            return [node[1]]
        if kind == "alt":
            alts = [tuple(self._sequence(seq)) for seq in node[1]]
            return list(alts[0]) if len(alts) == 1 else [self._helper(alts)]
        _, inner, lo, hi = node
        body = self._node(inner)
        item = body[0] if len(body) == 1 else self._helper([tuple(body)])
        out = [item] * lo
        if hi is None:
            star = self._helper([()])
            self.rules[star].append((item, star))
            out.append(star)
        elif hi > lo:
            tail = self._helper([(), (item,)])
            for _ in range(hi - lo - 1):
                tail = self._helper([(), (item, tail)])
            out.append(tail)
        return out

    def _analyse(self):
        """productive and nullable rules, and `live`: name -> [(alternative, its height)]
        for the productive alternatives (height: depth of the shallowest derivation)."""
        inf = float("inf")
        height, shortest = dict.fromkeys(self.rules, inf), dict.fromkeys(self.rules, inf)

        def measure(alt):  # (height, shortest length) of an alternative
            h = max([height[s] if type(s) is str else 0 if s.intervals() else inf for s in alt],
                    default=0)
            return h, sum(shortest[s] if type(s) is str else 1 for s in alt) if h < inf else inf
        changed = True
        while changed:
            changed = False
            for name, alts in self.rules.items():
                for h, n in map(measure, alts):
                    if h + 1 < height[name] or n < shortest[name]:
                        height[name] = min(h + 1, height[name])
                        shortest[name], changed = min(n, shortest[name]), True
        self.productive = {n for n, h in height.items() if h < inf}
        self.nullable = {n for n, length in shortest.items() if length == 0}
        self.live = {n: [(a, measure(a)[0]) for a in alts if measure(a)[0] < inf]
                     for n, alts in self.rules.items() if n in self.productive}

    def left_recursive(self):
        """Rules (helpers included) that can derive themselves before any code point."""
        reach = {n: set() for n in self.rules}  # rules that can start a rule's derivation
        for name, alts in self.rules.items():
            for alt in alts:
                for sym in alt:
                    if type(sym) is not str:
                        break
                    reach[name].add(sym)
                    if sym not in self.nullable:
                        break
        for k in reach:  # transitive closure (Warshall)
            for n in reach:
                if k in reach[n]:
                    reach[n] |= reach[k]
        return {n for n in reach if n in reach[n]}


class Recognizer:
    """Earley recognizer over code points for one start rule of a Grammar.

    Productions that use an unproductive rule or an empty class are dropped first, so every
    chart item left can still be completed, and so can all items it was predicted from:
    the text read so far is a viable prefix exactly when its chart is not empty. Empty
    rules are handled as Aycock and Horspool do: predicting a nullable rule also steps
    over it. An item is (production, dot, origin); production 0 is START -> root."""

    def __init__(self, grammar, root="root"):
        if root not in grammar.ast:
            raise GrammarError(f"no rule named '{root}'", 1, 1)
        self.lhs, self.rhs, self.prods = [None], [(root,)], {n: [] for n in grammar.live}
        for name, alts in grammar.live.items():
            for alt, _ in alts:
                self.prods[name].append(len(self.rhs))
                self.lhs.append(name)
                self.rhs.append(alt)
        self.nullable = grammar.nullable
        self.chart0 = self._close([(0, 0, 0)], 0, []) if root in grammar.productive else None

    def _close(self, items, k, charts):
        """Chart k from its scanned items: (waiting: rule -> items expecting it, scannable
        (item, CharSet) pairs, whether START is complete)."""
        work = list(dict.fromkeys(items))
        seen, waiting, scans, predicted, complete = set(work), {}, [], set(), False
        for item in work:  # which grows as it goes
            p, d, o = item
            alt = self.rhs[p]
            if d < len(alt):
                sym = alt[d]
                if type(sym) is not str:
                    scans.append((item, sym))
                    continue
                waiting.setdefault(sym, []).append(item)
                new = []
                if sym not in predicted:
                    predicted.add(sym)
                    new = [(q, 0, k) for q in self.prods[sym]]
                if sym in self.nullable:
                    new.append((p, d + 1, o))
            elif p == 0:
                complete = True
                continue
            else:
                parents = (waiting if o == k else charts[o][0]).get(self.lhs[p], ())
                new = [(pp, pd + 1, po) for pp, pd, po in parents]
            for it in new:
                if it not in seen:
                    seen.add(it)
                    work.append(it)
        return waiting, scans, complete

    def _step(self, charts, ch):
        cp = ord(ch)
        items = [(p, d + 1, o) for (p, d, o), cs in charts[-1][1] if cp in cs]
        return self._close(items, len(charts), charts) if items else None

    def classify(self, s):
        return self.classify_many([s])[0]

    def classify_many(self, strings):
        """classify() for each string, sharing the charts of common prefixes."""
        out = [None] * len(strings)
        charts, prev = [self.chart0], ""
        for idx in sorted(range(len(strings)), key=strings.__getitem__):
            s = strings[idx]
            del charts[len(os.path.commonprefix([s, prev])) + 1:]
            while len(charts) <= len(s) and charts[-1] is not None:
                charts.append(self._step(charts, s[len(charts) - 1]))
            last = charts[-1]
            out[idx] = "reject" if last is None else "complete" if last[2] else "prefix"
            prev = s
        return out
