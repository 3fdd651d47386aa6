#!/usr/bin/python3
"""Prints a firmware image's section sizes as size(1) reports them, and how much of
each is the model, the arena, ember's code and data, the image's own code and data (the
microcontroller image's start-up, board support and start-up heap: examples/mcu), and
the C/C++ libraries, from the GNU ld link map. Sections the image lacks are left out.

usage: size_report.py SIZE_TOOL IMAGE LINK_MAP LABEL
"""
import collections
import re
import subprocess
import sys

# .model, .arena and .stack are the microcontroller image's (examples/mcu/mps3_an547.ld).
SECTIONS = (".text", ".rodata", ".model", ".data", ".bss", ".arena", ".stack")


def section_sizes(size_tool, image):
    out = subprocess.run([size_tool, "-A", image], check=True, capture_output=True,
                         text=True).stdout
    sizes = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0] in SECTIONS:
            sizes[fields[0]] = int(fields[1])
    return sizes


def owner(input_section, path):
    if input_section == ".rodata.ember_model":  # not .rodata.ember_model_from_memory.str*
        return "model"
    if "ember_firmware.dir/firmware.c" in path and input_section.startswith(".bss"):
        return "arena"
    if input_section.startswith(".bss.ember_arena"):
        return "arena"
    if ("libember_firmware_runtime.a" in path or "ember_firmware.dir" in path or
            "libember_mcu_runtime.a" in path):
        return "ember"
    if "ember_mcu_" in path and ".dir/" in path:
        return "board"
    return "libs"


def attribute(link_map):
    """Bytes per (output section, owner) from the input-section lines of the map."""
    text = open(link_map).read()
    text = text[text.index("Linker script and memory map"):]
    totals = collections.Counter()
    output = None
    pending = None
    for line in text.splitlines():
        if line and not line[0].isspace():
            match = re.match(r"(\.\S+)", line)
            output = match.group(1) if match else None
            continue
        match = re.match(r"^ (\.\S+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if match:
            section, size, path = match.groups()
        else:
            # Long input-section names put address, size and file on the next line.
            if re.match(r"^ (\.\S+)$", line):
                pending = line.strip()
                continue
            match = re.match(r"^\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S.*)$", line)
            if not (match and pending):
                continue
            section, (size, path) = pending, match.groups()
        pending = None
        if output in SECTIONS:
            totals[(output, owner(section, path))] += int(size, 16)
    return totals


def main():
    size_tool, image, link_map, label = sys.argv[1:5]
    sizes = section_sizes(size_tool, image)
    parts = attribute(link_map)
    owners = ["model", "arena", "ember"]
    if any(owner == "board" for _, owner in parts):
        owners.append("board")
    print(f"firmware size ({label}, {size_tool} -A):")
    print(f"  {'section':<8} {'bytes':>9}   " +
          " ".join(f"{owner:>9}" for owner in owners) + f" {'libc/libstdc++':>14}")
    for section in SECTIONS:
        if section not in sizes:
            continue
        print(f"  {section:<8} {sizes[section]:>9}   " +
              " ".join(f"{parts[(section, owner)]:>9}" for owner in owners) +
              f" {parts[(section, 'libs')]:>14}")


if __name__ == "__main__":
    main()
