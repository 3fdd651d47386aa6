#!/usr/bin/env python3
"""Oracle: images through `ember image` against Pillow (Debian's python3-pil) and the
slow Hugging Face image processors ported here to NumPy from transformers' Python
(Gemma3ImageProcessor, SiglipImageProcessor, Idefics3ImageProcessor / SmolVLM's):
Pillow's Image.resize on bytes, int() and math.ceil size arithmetic, rescale in float64
then float32, normalize in float32, tiles in row order then the global view.

Checked:
  decoding: equal to Pillow's pixels, alpha composited on white as Image.alpha_composite
      does (Idefics3) or dropped as convert("RGB") does (Gemma 3): PNGs from Pillow, and
      from an encoder here for every color type and bit depth, Adam7-interlaced or not,
      with tRNS, all five row filters, stored and compressed blocks, the data split over
      IDAT chunks; JPEGs (baseline 4:4:4, 4:2:2, 4:2:0, progressive, optimized Huffman
      tables, grayscale) from Pillow's libjpeg-turbo;
  processing: every float of every tile equal to the port's, run on the same decoded
      pixels, for bilinear, bicubic and Lanczos, fixed sizes and SmolVLM's tiling
      (one tile, a row, a column, a grid; upscaled and downscaled images).
"""
import json
import math
import os
import struct
import sys
import zlib

import oracle_util as u


def load_numpy_pil():
    try:
        import numpy as np
        from PIL import Image
    except ImportError as e:
        message = f"NumPy/Pillow not importable by {sys.executable}: {e}"
        if os.environ.get("EMBER_REQUIRE_MODELS") == "1":
            print(f"FAIL: {message} (tools/scripts/setup.sh all installs python3-pil)")
            sys.exit(1)
        print(f"SKIP: {message}")
        sys.exit(u.SKIP)
    return np, Image


# --- the processors, as transformers computes them -------------------------------------

def pil_resize(np, Image, rgb, width, height, resample):
    """image_transforms.resize / Idefics3's resize: PIL on uint8, reducing_gap None."""
    return np.asarray(Image.fromarray(rgb).resize((width, height), resample=resample))


def rescale_normalize(np, rgb, cfg):
    x = rgb.astype(np.float64) * cfg.get("rescale_factor", 1 / 255)
    x = x.astype(np.float32)
    mean = np.array(cfg.get("image_mean", [0.5] * 3), dtype=np.float32)
    std = np.array(cfg.get("image_std", [0.5] * 3), dtype=np.float32)
    x = (x - mean) / std
    return x.transpose(2, 0, 1)


def rescale_to_max_len(h, w, max_len):
    aspect = w / h
    if w >= h:
        w = max_len
        h = int(w / aspect)
        if h % 2:
            h += 1
    else:
        h = max_len
        w = int(h * aspect)
        if w % 2:
            w += 1
    return max(h, 1), max(w, 1)


def scale_below(h, w, max_len=4096):
    aspect = w / h
    if w >= h and w > max_len:
        w = max_len
        h = int(w / aspect)
    elif h > w and h > max_len:
        h = max_len
        w = int(h * aspect)
    return max(h, 1), max(w, 1)


def idefics3(np, Image, rgb, cfg):
    resample = cfg["resample"]
    h, w = rgb.shape[:2]
    h, w = scale_below(*rescale_to_max_len(h, w, cfg["size"]["longest_edge"]))
    img = pil_resize(np, Image, rgb, w, h, resample)
    tile = cfg["max_image_size"]["longest_edge"]
    aspect = w / h
    if w >= h:
        w = math.ceil(w / tile) * tile
        h = int(w / aspect)
        h = math.ceil(h / tile) * tile
    else:
        h = math.ceil(h / tile) * tile
        w = int(h * aspect)
        w = math.ceil(w / tile) * tile
    img = pil_resize(np, Image, img, w, h, resample)
    frames, rows, cols = [], 0, 0
    if h > tile or w > tile:
        rows, cols = math.ceil(h / tile), math.ceil(w / tile)
        th, tw = math.ceil(h / rows), math.ceil(w / cols)
        for r in range(rows):
            for c in range(cols):
                frames.append(img[r * th:min(r * th + th, h), c * tw:min(c * tw + tw, w)])
        img = pil_resize(np, Image, img, tile, tile, resample)
    frames.append(img)
    return [rescale_normalize(np, f, cfg) for f in frames], rows, cols


def fixed(np, Image, rgb, cfg):
    size = cfg["size"]
    img = pil_resize(np, Image, rgb, size["width"], size["height"], cfg["resample"])
    return [rescale_normalize(np, img, cfg)], 0, 0


def pillow_rgb(np, Image, path, over_white):
    im = Image.open(path)
    if over_white:  # Idefics3's convert_to_rgb
        rgba = im.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255))
        return np.asarray(Image.alpha_composite(white, rgba).convert("RGB"))
    return np.asarray(im.convert("RGB"))


# --- PNGs of every kind, from an encoder written here ----------------------------------

ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))


def pack_row(np, samples, depth):
    if depth == 8:
        return bytes(samples.astype(np.uint8))
    if depth == 16:
        return samples.astype(">u2").tobytes()
    bits = "".join(format(int(v), f"0{depth}b") for v in samples)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


def encode_png(np, rng, samples, color_type, depth, interlace, plte=None, trns=None):
    """A PNG with a random filter per row, split over three IDAT chunks."""
    h, w = samples.shape[:2]
    raw = b""
    bpp = max(1, CHANNELS[color_type] * depth // 8)
    for x0, y0, dx, dy in ADAM7 if interlace else [(0, 0, 1, 1)]:
        sub = samples[y0::dy, x0::dx]
        if sub.size == 0:
            continue
        prev = None
        for row in sub:
            r = pack_row(np, row.reshape(-1), depth)
            f = int(rng.integers(0, 5))
            out = bytearray(len(r))
            for i in range(len(r)):
                a = r[i - bpp] if i >= bpp else 0
                b = prev[i] if prev is not None else 0
                c = prev[i - bpp] if prev is not None and i >= bpp else 0
                if f == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                else:
                    pred = [0, a, b, (a + b) // 2][f]
                out[i] = (r[i] - pred) & 255
            raw += bytes([f]) + bytes(out)
            prev = r
    data = b"\x89PNG\r\n\x1a\n" + png_chunk(
        b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, interlace))
    if plte is not None:
        data += png_chunk(b"PLTE", plte)
    if trns is not None:
        data += png_chunk(b"tRNS", trns)
    z = zlib.compress(raw, int(rng.integers(0, 10)))
    cuts = [0, len(z) // 3, len(z) // 2, len(z)]
    for a, b in zip(cuts, cuts[1:]):
        data += png_chunk(b"IDAT", z[a:b])
    return data + png_chunk(b"IEND", b"")


def make_pngs(np, directory):
    rng = np.random.default_rng(11)
    paths = []
    for color_type, depths in [(0, [1, 2, 4, 8, 16]), (2, [8, 16]), (3, [1, 2, 4, 8]),
                               (4, [8, 16]), (6, [8, 16])]:
        for depth in depths:
            for interlace in (0, 1):
                w, h = int(rng.integers(1, 30)), int(rng.integers(1, 20))
                top = (1 << depth) - 1
                samples = rng.integers(0, top + 1, size=(h, w, CHANNELS[color_type]))
                if depth == 16 and interlace:  # small values: 16-bit gray's clip to 255
                    samples = rng.integers(0, 600, size=(h, w, CHANNELS[color_type]))
                plte = trns = None
                if color_type == 3:
                    n = int(rng.integers(1, min(top + 1, 256) + 1))
                    samples = rng.integers(0, n, size=(h, w, 1))
                    plte = bytes(rng.integers(0, 256, size=3 * n).astype(np.uint8))
                    trns = bytes(rng.integers(0, 256, size=int(rng.integers(1, n + 1)))
                                 .astype(np.uint8))
                elif color_type in (0, 2) and interlace:
                    trns = b"".join(struct.pack(">H", int(v)) for v in samples[0, 0])
                path = os.path.join(directory, f"gen_{color_type}_{depth}_{interlace}.png")
                with open(path, "wb") as f:
                    f.write(encode_png(np, rng, samples, color_type, depth, interlace, plte,
                                       trns))
                paths.append((path, True))
    return paths


# --- the test --------------------------------------------------------------------------

def make_images(np, Image, directory):
    rng = np.random.default_rng(7)

    def smooth(h, w, c):
        # Noise plus a gradient: resizes see both edges and flat runs.
        yy, xx = np.mgrid[0:h, 0:w]
        base = (xx * 255 // max(w - 1, 1) + yy * 97 // max(h - 1, 1))[..., None]
        noise = rng.integers(0, 64, size=(h, w, c))
        return ((base + noise) % 256).astype(np.uint8)

    images = []  # (path, lossless)
    def save(name, im, **kw):
        path = os.path.join(directory, name)
        im.save(path, **kw)
        images.append((path, name.endswith(".png")))

    save("rgb.png", Image.fromarray(smooth(37, 53, 3)))
    rgba = smooth(29, 31, 4)
    rgba[..., 3] = rng.integers(0, 256, size=(29, 31))
    rgba[0, :, 3] = 0
    rgba[1, :, 3] = 255
    save("rgba.png", Image.fromarray(rgba, "RGBA"))
    save("gray.png", Image.fromarray(smooth(20, 70, 1)[..., 0], "L"))
    save("gray_alpha.png", Image.fromarray(smooth(11, 9, 2), "LA"))
    save("palette.png", Image.fromarray(smooth(40, 30, 3)).quantize(16))
    wide16 = (smooth(6, 50, 3).astype(np.uint16) * 257).astype(">u2")
    # Pillow writes 16-bit RGB from raw big-endian samples.
    save("rgb16.png", Image.frombytes("RGB", (50, 6), wide16.tobytes(), "raw", "RGB;16B"))
    save("tall.png", Image.fromarray(smooth(300, 7, 3)))
    save("big.png", Image.fromarray(smooth(700, 1100, 3)))
    jpeg = Image.fromarray(smooth(64, 80, 3))
    save("q420.jpg", jpeg, quality=90)
    save("q444.jpg", jpeg, quality=95, subsampling=0)
    save("q422.jpg", Image.fromarray(smooth(31, 45, 3)), quality=75, subsampling=1)
    save("progressive.jpg", jpeg, quality=85, progressive=True)
    save("optimized.jpg", Image.fromarray(smooth(17, 9, 3)), quality=60, optimize=True)
    save("gray.jpg", Image.fromarray(smooth(33, 47, 1)[..., 0], "L"), quality=90)
    return images


CONFIGS = {
    "gemma3": {"image_processor_type": "Gemma3ImageProcessor",
               "size": {"height": 896, "width": 896}, "resample": 2,
               "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
               "rescale_factor": 0.00392156862745098},
    "siglip_bicubic": {"image_processor_type": "SiglipImageProcessor",
                       "size": {"height": 61, "width": 45}, "resample": 3,
                       "image_mean": [0.48145466, 0.4578275, 0.40821073],
                       "image_std": [0.26862954, 0.26130258, 0.27577711]},
    "smolvlm": {"image_processor_type": "Idefics3ImageProcessor",
                "size": {"longest_edge": 2048}, "max_image_size": {"longest_edge": 512},
                "resample": 1, "rescale_factor": 0.00392156862745098,
                "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]},
    "smolvlm_small": {"image_processor_type": "SmolVLMImageProcessor",
                      "size": {"longest_edge": 150}, "max_image_size": {"longest_edge": 48},
                      "resample": 3},
}


def main():
    args = u.parse_args(__doc__)
    np, Image = load_numpy_pil()
    ember = u.Ember(args)
    images = make_images(np, Image, ember.dir)
    generated = make_pngs(np, ember.dir)
    failures = 0
    for name, cfg in CONFIGS.items():
        cfg_path = ember.path(name + ".json")
        with open(cfg_path, "w") as f:
            json.dump(cfg, f)
        split = cfg["image_processor_type"] in ("Idefics3ImageProcessor",
                                                "SmolVLMImageProcessor")
        if name == "smolvlm":  # the full size is slow in the port: two images
            chosen = [i for i in images if os.path.basename(i[0]) in ("big.png", "q420.jpg")]
        elif name == "gemma3":
            chosen = images
        else:  # the small outputs take every generated PNG too
            chosen = images + generated
        for path, _ in chosen:
            label = f"{name} {os.path.basename(path)}"
            out, rgb_out = ember.path("pixels.npy"), ember.path("rgb.npy")
            report = ember.run("image", "--image", path, "--processor-config", cfg_path,
                               "--out", out, "--rgb-out", rgb_out)
            got_rgb = np.load(rgb_out).astype(np.uint8)
            want_rgb = pillow_rgb(np, Image, path, over_white=split)
            if got_rgb.shape != want_rgb.shape:
                print(f"FAIL {label}: decoded {got_rgb.shape}, Pillow {want_rgb.shape}")
                failures += 1
                continue
            diff = np.abs(got_rgb.astype(int) - want_rgb.astype(int))
            if diff.max() != 0:
                print(f"FAIL {label}: decoded pixels differ from Pillow's by up to "
                      f"{diff.max()} ({(diff > 0).sum()} values)")
                failures += 1
            # The processor on ember's decoded pixels: every float equal.
            port = idefics3 if split else fixed
            tiles, rows, cols = port(np, Image, got_rgb, cfg)
            want = np.stack(tiles)
            got = np.load(out)
            if got.shape != want.shape:
                print(f"FAIL {label}: {got.shape[0]} tiles of {got.shape[2:]}, the "
                      f"processor makes {want.shape[0]} of {want.shape[2:]} "
                      f"({rows} x {cols})\n{report}")
                failures += 1
                continue
            bad = (got != want).sum()
            if bad:
                print(f"FAIL {label}: {bad} of {got.size} values differ, max "
                      f"{np.abs(got - want).max():.3g}")
                failures += 1
            else:
                print(f"ok   {label}: {got.shape[0]} tile(s) of {got.shape[3]}x{got.shape[2]}"
                      f" ({rows} x {cols}) equal")
    if not args.keep:
        import shutil
        shutil.rmtree(ember.dir, ignore_errors=True)
    if failures:
        print(f"FAIL: {failures} comparison(s)")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
