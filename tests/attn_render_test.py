#!/usr/bin/env python3
"""`ember attn`'s SVG in a real browser: headless Chromium (Debian's chromium package)
renders it to a PNG, which must have the SVG's size, not be blank, and show the heatmap
where the SVG says it is: the first token's cell (weight 1: the darkest colour), a masked
cell (the hatch's light grey), white margins. Before that the SVG must be well-formed
XML, self-contained (no scripts, no external references) and carry the prompt's labels:
CJK split into byte-fallback tokens, XML's special characters.

Exits 0 on success, 1 on failure, 77 (CTest's skip code) when Chromium is missing unless
EMBER_REQUIRE_MODELS=1 (CI): then that fails. Standard library only (PNG decoded here).
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

SKIP = 77
PROMPT = 'Tom & "Lily" <3 中!'
DARKEST = (0x08, 0x28, 0x64)  # the colour of weight 1 (tools/viz/heatmap_svg.cc)


def read_png(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit, non-interlaced PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, header, idat = 8, None, []
    while pos < len(data):
        (size,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + size]
        pos += 12 + size
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unexpected PNG format: depth {depth}, colour type {colour}")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    prev, rows = bytearray(stride), []
    for y in range(height):  # undo the per-row filters (PNG spec, section 9)
        start = y * (stride + 1)
        kind, cur = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for i in range(bpp, stride):
                cur[i] = (cur[i] + cur[i - bpp]) & 255
        elif kind == 2:
            cur = bytearray((a + b) & 255 for a, b in zip(cur, prev))
        elif kind == 3:
            for i in range(stride):
                left = cur[i - bpp] if i >= bpp else 0
                cur[i] = (cur[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(cur)
        prev = cur

    def pixel(x, y):  # (r, g, b)
        return tuple(rows[y][x * bpp:x * bpp + 3])

    return width, height, pixel


class Checks:
    def __init__(self):
        self.failures = 0

    def check(self, what, ok, detail=""):
        print(f"{'ok  ' if ok else 'FAIL'} {what} {detail}")
        self.failures += not ok


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--ember", required=True)
    p.add_argument("--model", required=True, help="stories260K as .ember")
    p.add_argument("--chromium", default="/usr/bin/chromium")
    p.add_argument("--keep", action="store_true", help="keep the SVG and PNG")
    args = p.parse_args()
    if not os.access(args.chromium, os.X_OK):
        if os.environ.get("EMBER_REQUIRE_MODELS") == "1":
            print(f"FAIL: {args.chromium} is missing (tools/scripts/setup.sh all installs chromium)")
            return 1
        print(f"SKIP: {args.chromium} is missing")
        return SKIP

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
        profile = os.path.join(tmp, "profile")
        r = subprocess.run(
            [args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--hide-scrollbars",
             "--force-device-scale-factor=1", f"--user-data-dir={profile}",
             f"--screenshot={png_path}", f"--window-size={width},{height}",
             "file://" + svg_path],
            capture_output=True, text=True, timeout=120)
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
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp)
    if checks.failures:
        print(f"{checks.failures} check(s) failed")
        return 1
    print("the SVG renders as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
