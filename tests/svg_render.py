#!/usr/bin/env python3
"""Rendering ember's SVG in a real browser for the tests: headless Chromium (Debian's
chromium package) draws an SVG to a PNG, which is decoded here (standard library only)
so a test can read its pixels. Used by attn_render_test.py and bench_report_test.py.
"""
import os
import shutil
import struct
import subprocess
import zlib

SKIP = 77  # CTest's skip code


class Checks:
    """Prints each check as it goes and counts the failures."""

    def __init__(self):
        self.failures = 0

    def check(self, what, ok, detail=""):
        print(f"{'ok  ' if ok else 'FAIL'} {what} {detail}")
        self.failures += not ok
        return ok

    def exit_code(self, success):
        """1 after printing how many checks failed, else 0 after printing `success`."""
        if self.failures:
            print(f"{self.failures} check(s) failed")
            return 1
        print(success)
        return 0


def remove_or_keep(tmp, keep):
    """Removes the test's directory, or says where it is (--keep)."""
    if keep:
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp)


def chromium_or_skip(chromium):
    """None when `chromium` runs; else the exit code a test should return: SKIP, or 1
    (a failure) when EMBER_REQUIRE_MODELS=1 (CI) asks for every check to run."""
    if os.access(chromium, os.X_OK):
        return None
    if os.environ.get("EMBER_REQUIRE_MODELS") == "1":
        print(f"FAIL: {chromium} is missing (tools/scripts/setup.sh all installs chromium)")
        return 1
    print(f"SKIP: {chromium} is missing")
    return SKIP


def render(chromium, svg_path, png_path, width, height, profile_dir):
    """Screenshots `svg_path` as a page of its own at width x height CSS pixels (scale
    1). Returns the CompletedProcess."""
    return subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--force-device-scale-factor=1", f"--user-data-dir={profile_dir}",
         f"--screenshot={png_path}", f"--window-size={width},{height}",
         "file://" + os.path.abspath(svg_path)],
        capture_output=True, text=True, timeout=120)


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
