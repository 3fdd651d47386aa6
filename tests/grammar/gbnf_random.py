"""Random test material for check_grammar.py: GBNF texts that exercise every feature of the
format (literals with escapes, classes with ranges, negation and Unicode, '.', groups, every
repetition, empty alternatives, comments and newlines where the format allows them, several
rules and recursion, but no left recursion, which ember refuses as llama.cpp does), and
strings for them: sentences generated from the grammar, their prefixes, and mutations. The
answers come from gbnf_reference.py's recognizer, never from how they were made.
Standard library only.
"""
from gbnf_reference import NAME_CHARS, parse

NAMES = ["expr", "item", "ws", "list-2", "Value", "num", "a", "b9", "x-y-z", "Tail", "q"]
POOL = [ord(c) for c in "abcxyz09 _-.,:=#|*+?(){}[]^\"\\\n\t\r\x00\x1f\x7f\x85é\xffж中ぁ😀\u2028"]
RANGES = [("a", "f"), ("0", "9"), ("A", "Z"), ("x", "z"), ("\x00", "\x1f"), ("à", "ÿ"),
          ("ぁ", "ゟ"), ("一", "鿿"), ("😀", "🙏"), ("!", "/"), ("\u0080", "\u07ff")]


class _RandomText:
    def __init__(self, rng, names):
        self.rng, self.names, self.depth = rng, names, rng.choice([1, 2, 2, 3])  # of groups

    def pick(self, *choices):
        return self.rng.choice(choices)

    def text(self):
        rules = []
        for self.index, name in enumerate(self.names):
            head = name + self.pick(" ", "", "  ") + "::=" + self.pick(" ", " ", "", "\n    ")
            rules.append(head + self.alternatives(0, True, False)[0] + self.pick("", "", "  # end"))
            if self.rng.random() < 0.3:
                rules[-1] = self.pick("# a comment ::= \"x\"", "", "  # (") + "\n" + rules[-1]
        self.rng.shuffle(rules)
        return "\n".join(rules) + "\n"

    def alternatives(self, depth, top, guarded):
        """(text, whether every alternative always reads a code point)."""
        alts = [self.sequence(depth, not top, guarded) for _ in range(self.pick(1, 1, 2, 2, 3))]
        if self.rng.random() < 0.2:  # an empty alternative, never last at the top level
            alts.insert(self.rng.randint(0, len(alts) - top), ("", False))
        out = alts[0][0]
        for alt, _ in alts[1:]:
            out += (self.pick(" ", "", " \n  ", "  # or\n") if not top else self.pick(" ", "")) \
                + "|" + self.pick(" ", " ", "", "\n  ", " # next\n    ") + alt
        return out, all(consumes for _, consumes in alts)

    def sequence(self, depth, nested, guarded):
        """(text, whether it always reads a code point). `guarded`: a code point is read
        before it in this rule, so it may refer to this rule or earlier ones (recursion)
        without making left recursion; otherwise it refers to later rules only."""
        out, consumes = "", False
        for _ in range(self.pick(1, 1, 2, 2, 3, 4)):
            item, reads = self.item(depth, guarded or consumes)
            consumes = consumes or reads
            if out:
                sep = self.pick(" ", " ", " ", "", "\t", *(["\n   ", " # x\n  "] if nested else []))
                if not sep and out[-1] in NAME_CHARS and item[0] in NAME_CHARS:
                    sep = " "
                out += sep
            out += item
        return out, consumes

    def item(self, depth, guarded):
        """(text, whether it always reads a code point)."""
        r, consumes = self.rng.random(), False
        later = self.names[self.index + 1:] if not guarded else self.names
        if r < 0.3 or (r >= 0.75 and depth >= self.depth) or (0.5 <= r < 0.75 and not later):
            cps = [self.rng.choice(POOL) for _ in range(self.rng.randint(0, 4))]
            item, consumes = '"' + "".join(self.char(cp, True) for cp in cps) + '"', bool(cps)
        elif r < 0.45:
            members = []
            for k in range(self.rng.randint(1, 3)):
                lo = hi = self.rng.choice(POOL)
                if self.rng.random() < 0.4:
                    lo, hi = (ord(c) for c in self.rng.choice(RANGES))
                members.append(self.char(lo, False, not k)
                               + ("-" + self.char(hi, False) if hi != lo else ""))
            item = "[" + ("^" if self.rng.random() < 0.3 else "") + "".join(members) + "]"
            consumes = True
        elif r < 0.5:
            item = self.pick(".", ".", '""', "()")
            consumes = item == "."
        elif r < 0.75:
            item = self.rng.choice(later)
        else:
            pad = self.pick("", "", " ", "\n  ", " # group\n")
            body, consumes = self.alternatives(depth + 1, False, guarded)
            item = "(" + pad + body + self.pick("", " ", "\n") + ")"
        if self.rng.random() < 0.3:
            m, n = self.rng.randint(0, 2), self.rng.randint(0, 2)
            ops = ["?", f"{{{m}}}", f"{{{m},{m + n}}}", f"{{0,{n + 1}}}"]
            if consumes or item[-1] in NAME_CHARS:  # unbounded: not over the empty string
                ops += ["*", "+", f"{{{m},}}"]
            op = self.rng.choice(ops)
            item += op
            consumes = consumes and (op == "+" or (op[0] == "{" and op[1] != "0"))
        return item, consumes

    def char(self, cp, literal, first=False):
        """cp written inside a literal or a class, raw or as one of its escapes."""
        forced = {92: "\\\\", 34: '\\"' if literal else None, 93: None if literal else "\\]",
                  45: None if literal else "\\x2D", 94: "\\x5e" if first and not literal else None}
        if forced.get(cp):
            return forced[cp]
        escapes = [f"\\U{cp:08x}"] + ([f"\\u{cp:04X}", f"\\u{cp:04x}"] if cp < 0x10000 else [])
        escapes += [f"\\x{cp:02x}", f"\\x{cp:02X}"] if cp < 0x100 else []
        named = {9: "\\t", 10: "\\n", 13: "\\r", 91: "\\[", 93: "\\]", 34: '\\"'}
        escapes += [named[cp]] if cp in named else []
        if cp < 0x20 or cp == 0x7F or self.rng.random() < 0.3:
            return self.rng.choice(escapes)
        return chr(cp)


def random_grammar(rng):
    """Random GBNF text using every feature, with a non-empty root language and no left
    recursion (ember, like llama.cpp, refuses left-recursive grammars)."""
    while True:
        names = ["root"] + rng.sample(NAMES, rng.choice([1, 2, 2, 3, 4]))
        text = _RandomText(rng, names).text()
        g = parse(text)
        if "root" in g.productive and not g.left_recursive():
            return text


def sentence(grammar, rng, root="root", budget=40, pool=POOL):
    """A random sentence of the rule `root` (which must be productive), of about `budget`
    code points: past that, each rule takes its shallowest alternative, which ends."""
    out, stack, steps = [], [root], 0
    while stack:
        sym = stack.pop()
        if type(sym) is not str:
            out.append(chr(sym.sample(rng, pool)))
            continue
        alts, steps = grammar.live[sym], steps + 1
        if steps > 4 * budget or len(out) + len(stack) > budget:
            low = min(h for _, h in alts)
            alts = [(a, h) for a, h in alts if h == low]
        stack.extend(reversed(rng.choice(alts)[0]))
    return "".join(out)


def random_strings(grammar, rng, n, root="root"):
    """n distinct strings: sentences of `root`, their prefixes, and mutations of them
    (deleted, inserted, replaced, appended or spliced code points)."""
    pool = list(POOL)
    for alts in grammar.live.values():
        pool += [s.sample(rng) for a, _ in alts for s in a if type(s) is not str]
    sentences = [sentence(grammar, rng, root, rng.randint(3, 60), pool)
                 for _ in range(max(2, n // 3))]
    out = dict.fromkeys([""] + sentences)
    for _ in range(20 * n):
        if len(out) >= n:
            break
        s, other, c = rng.choice(sentences), rng.choice(sentences), chr(rng.choice(pool))
        i, junk = rng.randint(0, len(s)), "".join(chr(rng.choice(pool)) for _ in range(3))
        edits = [s[:i], s[:i] + s[i + 1:], s[:i] + c + s[i:], s[:i] + c + s[i + 1:],
                 s + junk[:rng.randint(1, 3)], s[:i] + other[rng.randint(0, len(other)):]]
        out[rng.choices(edits, [35, 15, 15, 15, 10, 10])[0]] = None
    return [s for s in out if len(s) <= 200][:n]
