#!/usr/bin/env python3
"""Writes the Unicode tables of BERT's normalizer and pre-tokenizer (bert_normalizer.cc).

Runs on the build host at build time (standard library only), from Debian's
unicode-data: UnicodeData.txt (general categories, simple lowercase mappings) and
SpecialCasing.txt (the unconditional full lowercase mappings: U+0130 -> i U+0307).

BERT.inc holds:

  kBertClassRuns   sorted runs, entry = (first_code_point << 2) | class: 0 none,
                   1 punctuation (general category P*, or ASCII 33-47, 58-64, 91-96,
                   123-126 as Hugging Face's BertPreTokenizer counts it), 2 other
                   (Cc, Cf, Co: what BertNormalizer's clean_text drops, as the Rust
                   crate unicode_categories' is_other() has it), 3 nonspacing mark (Mn:
                   what strip_accents drops after NFD)
  kBertLowerFrom   code points whose lowercase is not themselves, sorted, and
  kBertLowerTo     (pool index << 2) | length of their mapping in kBertLowerPool:
                   char::to_lowercase as Rust has it (full mappings without conditions:
                   Final_Sigma and the language-specific ones are not applied)

The generator checks kBertMaxGrowth, the UTF-8 growth per code point of the whole
normalizer (CJK spaces, decomposition, lowercase) that Tokenizer::EncodeCapacity sizes
its buffer by.

usage: gen_unicode_bert.py UNICODE_DATA_DIR BERT.inc
"""
import os
import sys

NONE, PUNCT, OTHER, MARK = 0, 1, 2, 3
MAX_GROWTH = 3  # bytes out per byte in, at most (bert_normalizer.h: kBertMaxGrowth)


def utf8_len(cp):
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


def is_ascii_punct(cp):
    return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126


def read_unicode_data(path):
    """({cp: category}, {cp: simple lowercase}, {cp: canonical decomposition})."""
    category, lower, decomposition = {}, {}, {}
    range_first = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(";")
            if len(fields) < 14:
                continue
            cp = int(fields[0], 16)
            if fields[1].endswith(", First>"):
                range_first = cp
                continue
            first = cp
            if fields[1].endswith(", Last>"):
                first, range_first = range_first, None
            for c in range(first, cp + 1):
                category[c] = fields[2]
            if fields[13]:
                lower[cp] = [int(fields[13], 16)]
            if fields[5] and not fields[5].startswith("<"):
                decomposition[cp] = [int(x, 16) for x in fields[5].split()]
    return category, lower, decomposition


def read_special_lower(path):
    """{cp: full lowercase} for the mappings without a condition."""
    special = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = [x.strip() for x in line.split("#", 1)[0].split(";")]
            if len(fields) < 5 or fields[4]:  # a condition list: not char::to_lowercase
                continue
            cp = int(fields[0], 16)
            special[cp] = [int(x, 16) for x in fields[1].split()]
    return special


def is_chinese(cp):  # Hugging Face's BertNormalizer ranges (bert_normalizer.cc)
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F
            or 0x2B920 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    data_dir, out_path = sys.argv[1], sys.argv[2]
    category, lower, decomposition = read_unicode_data(
        os.path.join(data_dir, "UnicodeData.txt"))
    lower.update(read_special_lower(os.path.join(data_dir, "SpecialCasing.txt")))
    lower = {cp: m for cp, m in lower.items() if m != [cp]}

    def cls(cp):
        cat = category.get(cp, "Cn")
        if cat.startswith("P") or is_ascii_punct(cp):
            return PUNCT
        if cat in ("Cc", "Cf", "Co"):
            return OTHER
        return MARK if cat == "Mn" else NONE

    runs, prev = [], None
    for cp in range(0x110000):
        c = cls(cp)
        if c != prev:
            runs.append((cp << 2) | c)
            prev = c

    def full(cp):
        return [d for part in decomposition.get(cp, [cp]) for d in
                (full(part) if part in decomposition and part != cp else [part])]

    # The normalizer's output per code point, at its longest: CJK gets two spaces;
    # decomposition (strip_accents) then lowercase, or lowercase alone.
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        parts = [p for p in full(cp) if category.get(p) != "Mn"]
        stripped = sum(utf8_len(q) for p in parts for q in lower.get(p, [p]))
        lowered = sum(utf8_len(q) for q in lower.get(cp, [cp]))
        out = max(stripped, lowered, utf8_len(cp)) + (2 if is_chinese(cp) else 0)
        if out > MAX_GROWTH * utf8_len(cp):
            raise ValueError(f"U+{cp:04X} normalizes to {out} bytes")
    keys = sorted(lower)
    pool, refs = [], []
    for cp in keys:
        if len(lower[cp]) > 3:
            raise ValueError(f"U+{cp:04X} lowercases to more than 3 code points")
        refs.append((len(pool) << 2) | len(lower[cp]))
        pool += lower[cp]
    lines = [
        "// Generated at build time by runtime/text/gen_unicode_bert.py from "
        "UnicodeData.txt and",
        "// SpecialCasing.txt. Do not edit.",
        f"constexpr size_t kGeneratedMaxGrowth = {MAX_GROWTH};",
        "// (first code point << 2) | class (0 none, 1 punctuation, 2 Cc/Cf/Co, 3 Mn).",
    ]

    def array(decl, values, per_row=8):
        out = [decl + " = {"]
        for i in range(0, len(values), per_row):
            out.append("    " + " ".join(f"0x{v:x}," for v in values[i:i + per_row]))
        return out + ["};"]

    lines += array(f"constexpr uint32_t kBertClassRuns[{len(runs)}]", runs)
    lines += array(f"constexpr uint32_t kBertLowerFrom[{len(keys)}]", keys)
    lines += array(f"constexpr uint32_t kBertLowerTo[{len(refs)}]", refs)
    lines += array(f"constexpr uint32_t kBertLowerPool[{len(pool)}]", pool)
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main()
