#!/usr/bin/env python3
"""Writes the Unicode tables the tokenizer needs: code point classes and NFC.

Runs on the build host at build time (standard library only). Reads Debian's
unicode-data files and writes two C++ fragments.

CLASSES.inc: the classes of the pre-tokenizer patterns, one sorted array of runs

    entry = (first_code_point << 2) | class

A run holds from its first code point up to the next entry's first code point (the
last run reaches U+10FFFF). Classes: 0 other, 1 letter (general category L*),
2 number (N*), 3 white space (PropList White_Space). No white-space code point is a
letter or a number, so one class per code point is enough.

NFC.inc: Unicode normalization form C (UAX #15) from UnicodeData.txt (canonical
combining classes, canonical decompositions) and DerivedNormalizationProps.txt
(NFC_Quick_Check, Full_Composition_Exclusion); Hangul syllables are left to the
algorithm. Runs of (NFC_QC, combining class), the full canonical decompositions, the
primary composites. The generator checks the bounds the runtime sizes its buffers by.

usage: gen_unicode_classes.py UNICODE_DATA_DIR CLASSES.inc NFC.inc
"""
import os
import sys

OTHER, LETTER, NUMBER, SPACE = 0, 1, 2, 3
MAX_CODE_POINT = 0x10FFFF


def read_categories(path):
    """Yields (first, last, class) for every letter or number in UnicodeData.txt."""
    range_first = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(";")
            if len(fields) < 3:
                continue
            cp = int(fields[0], 16)
            name, category = fields[1], fields[2]
            cls = LETTER if category.startswith("L") else (
                NUMBER if category.startswith("N") else OTHER)
            # Large blocks (CJK, Hangul, ...) are given as a First/Last pair of lines.
            if name.endswith(", First>"):
                range_first = cp
                continue
            first = cp
            if name.endswith(", Last>"):
                if range_first is None:
                    raise ValueError(f"{path}: Last without First at {cp:04X}")
                first, range_first = range_first, None
            if cls != OTHER:
                yield first, cp, cls


def read_white_space(path):
    """Yields (first, last) of every White_Space range in PropList.txt."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            cps, prop = (s.strip() for s in line.split(";"))
            if prop != "White_Space":
                continue
            first, _, last = cps.partition("..")
            yield int(first, 16), int(last or first, 16)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    data_dir, out_path, nfc_path = sys.argv[1], sys.argv[2], sys.argv[3]
    unicode_data = os.path.join(data_dir, "UnicodeData.txt")
    prop_list = os.path.join(data_dir, "PropList.txt")
    with open(prop_list, encoding="utf-8") as f:
        version = f.readline().strip().lstrip("# ")  # "PropList-15.0.0.txt"

    ranges = list(read_categories(unicode_data))
    ranges += [(a, b, SPACE) for a, b in read_white_space(prop_list)]
    ranges.sort()
    # Runs: merge adjacent ranges of one class and fill the gaps with OTHER.
    runs = []  # (first, class)
    end = 0    # first code point not yet covered
    for first, last, cls in ranges:
        if first < end:
            raise ValueError(f"overlapping classes at U+{first:04X}")
        if first > end:
            runs.append((end, OTHER))
        if not runs or runs[-1][1] != cls:
            runs.append((first, cls))
        end = last + 1
    if end <= MAX_CODE_POINT:
        runs.append((end, OTHER))
    runs = [r for i, r in enumerate(runs) if i == 0 or r[1] != runs[i - 1][1]]

    lines = [
        "// Generated at build time by runtime/text/gen_unicode_classes.py from "
        f"{version} and UnicodeData.txt. Do not edit.",
        "// Entry = (first code point << 2) | class (0 other, 1 letter, 2 number, "
        "3 white space);",
        "// a run reaches up to the next entry's first code point.",
        f'constexpr char kUnicodeTableVersion[] = "{version}";',
        f"constexpr uint32_t kUnicodeClassRuns[{len(runs)}] = {{",
    ]
    row = []
    for first, cls in runs:
        row.append(f"0x{(first << 2) | cls:x},")
        if len(row) == 8:
            lines.append("    " + " ".join(row))
            row = []
    if row:
        lines.append("    " + " ".join(row))
    lines.append("};")
    write_lines(out_path, lines)
    write_lines(nfc_path, nfc_table(unicode_data, os.path.join(
        data_dir, "DerivedNormalizationProps.txt")))


def write_lines(path, lines):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def array_lines(decl, values, per_row=8):
    """A C++ array definition, `per_row` values a line."""
    lines = [decl + " = {"]
    for i in range(0, len(values), per_row):
        lines.append("    " + " ".join(f"{v}," for v in values[i:i + per_row]))
    lines.append("};")
    return lines


def read_normalization_props(path):
    """(NFC_QC: {code point: 1 maybe or 2 no}, set of Full_Composition_Exclusion)."""
    quick_check, excluded = {}, set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = [x.strip() for x in line.split("#", 1)[0].split(";")]
            if len(fields) < 2:
                continue
            first, _, last = fields[0].partition("..")
            cps = range(int(first, 16), int(last or first, 16) + 1)
            if fields[1] == "NFC_QC":
                for cp in cps:
                    quick_check[cp] = {"M": 1, "N": 2}[fields[2]]
            elif fields[1] == "Full_Composition_Exclusion":
                excluded.update(cps)
    return quick_check, excluded


def utf8_len(cp):
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3


def nfc_table(unicode_data, props_path):
    """The lines of NFC.inc."""
    ccc, decomposition = {}, {}
    with open(unicode_data, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(";")
            cp = int(fields[0], 16)
            if int(fields[3]):
                ccc[cp] = int(fields[3])
            # Canonical decompositions only: compatibility ones start with <tag>.
            if fields[5] and not fields[5].startswith("<"):
                decomposition[cp] = [int(x, 16) for x in fields[5].split()]
    quick_check, excluded = read_normalization_props(props_path)

    def full(cp):
        return [d for part in decomposition[cp] for d in
                (full(part) if part in decomposition else [part])]

    full_decomposition = {cp: full(cp) for cp in decomposition}
    composites = {}
    for cp, parts in decomposition.items():
        if len(parts) == 2 and cp not in excluded:
            composites[(parts[0], parts[1])] = cp
            # Composition never lengthens the UTF-8 text.
            if utf8_len(cp) > utf8_len(parts[0]) + utf8_len(parts[1]):
                raise ValueError(f"U+{cp:04X} is longer than its parts")
    # The runtime sizes its buffers for at most 3 code points per 2 bytes decomposed and
    # 3 bytes per byte of UTF-8 (Hangul syllables: 3 code points, 9 bytes for 3).
    for cp, parts in full_decomposition.items():
        if 2 * len(parts) > 3 * utf8_len(cp):
            raise ValueError(f"U+{cp:04X} decomposes into {len(parts)} code points")
        if sum(map(utf8_len, parts)) > 3 * utf8_len(cp):
            raise ValueError(f"U+{cp:04X} decomposes into more than 3x its bytes")

    # Runs of (quick check, combining class): entry = first << 11 | qc << 8 | ccc.
    runs, prev = [], None
    for cp in range(0x110000):
        value = (quick_check.get(cp, 0) << 8) | ccc.get(cp, 0)
        if value != prev:
            runs.append((cp << 11) | value)
            prev = value
    first_nontrivial = runs[1] >> 11  # runs[0] is U+0000 onwards: quick check yes, ccc 0

    keys = sorted(full_decomposition)
    pool, refs = [], []
    for cp in keys:
        parts = full_decomposition[cp]
        refs.append((len(pool) << 3) | len(parts))
        pool += parts
    if max(len(p) for p in full_decomposition.values()) > 7 or len(pool) >= 1 << 29:
        raise ValueError("decomposition references overflow")
    pairs = sorted(composites.items())
    lines = [
        "// Generated at build time by runtime/text/gen_unicode_classes.py from "
        "UnicodeData.txt and",
        "// DerivedNormalizationProps.txt. Do not edit.",
        f"constexpr uint32_t kNfcFirstNontrivial = 0x{first_nontrivial:x};",
        "// (first code point << 11) | (NFC_QC: 0 yes, 1 maybe, 2 no) << 8 | combining "
        "class;",
        "// a run reaches up to the next entry's first code point.",
    ]
    lines += array_lines(f"constexpr uint32_t kNfcPropertyRuns[{len(runs)}]",
                         [f"0x{r:x}" for r in runs])
    lines.append("// Code points with a canonical decomposition (Hangul syllables aside), "
                 "sorted; their")
    lines.append("// full decomposition is kNfcDecompositionPool[ref >> 3 ..][0, ref & 7).")
    lines += array_lines(f"constexpr uint32_t kNfcDecomposed[{len(keys)}]",
                         [f"0x{k:x}" for k in keys])
    lines += array_lines(f"constexpr uint32_t kNfcDecompositionRefs[{len(refs)}]",
                         [f"0x{r:x}" for r in refs])
    lines += array_lines(f"constexpr uint32_t kNfcDecompositionPool[{len(pool)}]",
                         [f"0x{p:x}" for p in pool])
    lines.append("// Primary composites: (first << 21 | second) sorted, and what they "
                 "compose to.")
    lines += array_lines(f"constexpr uint64_t kNfcCompositionPairs[{len(pairs)}]",
                         [f"0x{(a << 21) | b:x}" for (a, b), _ in pairs], 6)
    lines += array_lines(f"constexpr uint32_t kNfcCompositions[{len(pairs)}]",
                         [f"0x{c:x}" for _, c in pairs])
    return lines


if __name__ == "__main__":
    main()
