#!/usr/bin/env python3
"""Writes the code point class table the byte-level BPE pre-tokenizer needs.

Runs on the build host at build time (standard library only). Reads Debian's
unicode-data files and writes a C++ fragment with one sorted array of runs:

    entry = (first_code_point << 2) | class

A run holds from its first code point up to the next entry's first code point (the
last run reaches U+10FFFF). Classes: 0 other, 1 letter (general category L*),
2 number (N*), 3 white space (PropList White_Space). No white-space code point is a
letter or a number, so one class per code point is enough.

usage: gen_unicode_classes.py UNICODE_DATA_DIR OUT.inc
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
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    data_dir, out_path = sys.argv[1], sys.argv[2]
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
        "// Generated at build time by tools/gen_unicode_classes.py from "
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
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main()
