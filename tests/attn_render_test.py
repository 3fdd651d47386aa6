#!/usr/bin/env python3
"""`ember attn`'s SVG in a real browser: headless Chromium (Debian's chromium package)
renders it to a PNG, which must have the SVG's size, not be blank, and show the heatmap
where the SVG says it is: the first token's cell (weight 1: the darkest colour), a masked
cell (the hatch's light grey), white margins. Before that the SVG must be well-formed
XML, self-contained (no scripts, no external references) and carry the prompt's labels:
CJK split into byte-fallback tokens, XML's special characters.

Exits 0 on success, 1 on failure, 77 (CTest's skip code) when Chromium is missing unless
EMBER_REQUIRE_MODELS=1 (CI): then that fails. Standard library only (svg_render.py).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from svg_render import Checks, chromium_or_skip, read_png, remove_or_keep, render

PROMPT = 'Tom & "Lily" <3 中!'
DARKEST = (0x08, 0x28, 0x64)  # the colour of weight 1 (tools/viz/heatmap_svg.cc)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--ember", required=True)
    p.add_argument("--model", required=True, help="stories260K as .ember")
    p.add_argument("--chromium", default="/usr/bin/chromium")
    p.add_argument("--keep", action="store_true", help="keep the SVG and PNG")
    args = p.parse_args()
    missing = chromium_or_skip(args.chromium)
    if missing is not None:
        return missing

    checks = Checks()
    tmp = tempfile.mkdtemp(prefix="ember_attn_render_")
    try:
        svg_path, png_path = os.path.join(tmp, "attn.svg"), os.path.join(tmp, "attn.png")
        r = subprocess.run([args.ember, "attn", "-m", args.model, "-p", PROMPT, "--layer",
                            "1", "--values", "on", "-o", svg_path],
                           capture_output=True, text=True, check=True)
        n = int(re.search(r"(\d+) tokens", r.stderr)[1])
        text = open(svg_path, encoding="utf-8").read()

        # Well-formed, self-contained, labelled.
        root = ET.fromstring(text.encode("utf-8"))
        ns = "{http://www.w3.org/2000/svg}"
        checks.check("root is <svg>", root.tag == ns + "svg", root.tag)
        width, height = int(root.get("width")), int(root.get("height"))
        tags = {e.tag.replace(ns, "") for e in root.iter()}
        checks.check("no scripts, images or foreign objects",
                     not tags & {"script", "image", "foreignObject", "use", "a"}, str(tags))
        checks.check("no external references", not re.search(
            r"href|@import|url\((?!#)|https?:(?!//www\.w3\.org/2000/svg)", text))
        words = {e.text for e in root.iter() if e.text}
        for label in ("<s>", "&", "<", "中1/3", "中3/3", "layer 1 · head 7"):
            checks.check(f"label {label!r} present", label in words)
        panel = re.search(r'<g id="panel-0" data-cell="(\d+)" '
                          r'transform="translate\(([0-9.]+),([0-9.]+)\)"', text)
        checks.check("panel 0 found", panel is not None)
        cell, x0, y0 = int(panel[1]), float(panel[2]), float(panel[3])

        # Render it as a page of its own.
        r = render(args.chromium, svg_path, png_path, width, height,
                   os.path.join(tmp, "profile"))
        checks.check("chromium exits 0", r.returncode == 0,
                     "" if r.returncode == 0 else r.stderr[-2000:])
        checks.check("chromium wrote a PNG", os.path.exists(png_path))
        png_w, png_h, pixel = read_png(png_path)
        checks.check("PNG has the SVG's size", (png_w, png_h) == (width, height),
                     f"{png_w}x{png_h} vs {width}x{height}")
        colours = {pixel(x, y) for y in range(0, png_h, 3) for x in range(0, png_w, 3)}
        checks.check("not blank: many colours", len(colours) > 50, f"{len(colours)} colours")

        def near(got, want, tol=12):
            return all(abs(a - b) <= tol for a, b in zip(got, want))

        corner = pixel(int(x0) + 3, int(y0) + 3)  # token 0 on itself: weight 1
        checks.check("first cell is the darkest colour", near(corner, DARKEST), str(corner))
        masked = pixel(int(x0 + (n - 1) * cell + cell / 2), int(y0 + cell / 2))
        checks.check("masked cell is light grey", max(masked) - min(masked) <= 12 and
                     190 <= min(masked) <= 250, str(masked))
        checks.check("margin is white", pixel(2, png_h - 2) == (255, 255, 255),
                     str(pixel(2, png_h - 2)))
    finally:
        remove_or_keep(tmp, args.keep)
    return checks.exit_code("the SVG renders as expected")


if __name__ == "__main__":
    sys.exit(main())
