"""The Python package's images: a synthetic vision model (`ember convert --synthetic
--vision tiny`) takes an image as PNG bytes, a path, an RGB array and a PIL image alike,
and its logits equal `ember logits --image`'s (run by ctest's python_test with
test_ember.py, whose environment it reads: EMBER_LIBRARY, EMBER_CLI).
"""
import io
import os
import subprocess

import numpy as np
import pytest

import ember

CLI = os.environ["EMBER_CLI"]


def cli(*args: str) -> str:
    return subprocess.run([CLI, *args], check=True, capture_output=True).stdout.decode()


@pytest.fixture(scope="module")
def vision(tmp_path_factory):
    directory = tmp_path_factory.mktemp("vision")
    path = directory / "vision.ember"
    cli("convert", "--synthetic", "custom", "--dim", "64", "--hidden", "128", "--layers",
        "2", "--heads", "4", "--vocab", "300", "--ctx", "128", "--vision", "tiny", "-o",
        str(path))
    rgb = np.random.default_rng(5).integers(0, 256, (40, 56, 3), dtype=np.uint8)
    png = directory / "image.png"
    from PIL import Image
    Image.fromarray(rgb, "RGB").save(png)
    return path, png, rgb


def test_images_in_every_form_give_the_cli_logits(vision, tmp_path):
    path, png, rgb = vision
    prompt = "look: <start_of_image> and say"
    out = tmp_path / "logits.npy"
    cli("logits", "-m", str(path), "--image", str(png), "-p", prompt, "-o", str(out))
    want = np.load(out)[-1]
    model = ember.Model(str(path))
    assert model.has_vision
    from PIL import Image
    forms = [png.read_bytes(), str(png), rgb, Image.open(png)]
    for form in forms:
        with ember.Session(model, context=128) as s:
            ids = s.prefill_images(prompt, [form])
            assert ids.count(299) == 4  # the tiny tower's rows, as image tokens
            np.testing.assert_array_equal(s.logits, want)
    with ember.Session(model, context=128) as s:
        text = s.generate(prompt, max_new=4, images=[rgb])
        assert isinstance(text, str)
        assert s.position > 4


def test_refusals(vision):
    path, png, rgb = vision
    model = ember.Model(str(path))
    with ember.Session(model, context=128) as s:
        with pytest.raises(ember.EmberError):
            s.prefill_images("<start_of_image><start_of_image>", [rgb])  # 2 markers, 1 image
        with pytest.raises(ember.EmberError):
            s.prefill_images("x", [b"not an image"])
        with pytest.raises(ValueError):
            s.prefill_images("x", [rgb[:, :, :2]])
        with pytest.raises(ValueError):
            s.generate([1, 2], images=[rgb])
    text = ember.Model(os.environ["EMBER_TEST_MODEL"])
    assert not text.has_vision
    with ember.Session(text, context=32) as s:
        with pytest.raises(ValueError):
            s.prefill_images("x", [rgb])


def test_chat_turns_take_images(vision, tmp_path):
    path, png, rgb = vision
    template = tmp_path / "chat.jinja"
    template.write_text("{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
                        "{% if add_generation_prompt %}[assistant]{% endif %}")
    chat_model = tmp_path / "chat.ember"
    cli("convert", "--synthetic", "custom", "--dim", "64", "--hidden", "128", "--layers",
        "2", "--heads", "4", "--vocab", "300", "--ctx", "256", "--vision", "tiny",
        "--chat-template", str(template), "-o", str(chat_model))
    model = ember.Model(str(chat_model))
    with ember.Session(model, context=256, grammar_bytes=1 << 18) as s:
        chat = ember.Chat(s, max_images=2)
        chat.set_grammar("root ::= [a-z]+")  # the random model's replies stay UTF-8
        assert isinstance(chat.send("What is it?", max_new=3, images=[rgb]), str)
        first = chat.stats
        assert first["prompt_tokens"] > 4
        # A second image at the turn's marker; the first is reused from the cache.
        assert isinstance(chat.send("And <start_of_image>?", max_new=3, images=[png]), str)
        assert chat.stats["cached_tokens"] >= first["prompt_tokens"] - 1
        with pytest.raises(ValueError):
            chat.send("One more.", images=[rgb])  # max_images 2
        with pytest.raises(ember.EmberError):  # markers without images: refused at render
            chat.send("<start_of_image> <start_of_image>", max_new=2)
        chat.reset()
        assert isinstance(chat.send("Again.", max_new=2, images=[Image_of(rgb)]), str)
        with pytest.raises(ValueError):
            chat.add("assistant", "Seen.", images=[rgb])
        plain = ember.Chat(s)
        with pytest.raises(ValueError):
            plain.add("user", "x", images=[rgb])  # max_images 0
    # The image's tokens: its 4 rows and the text around them (<start_of_image>,
    # <end_of_image>), on top of the same turn's without an image.
    with ember.Session(model, context=256, grammar_bytes=1 << 18) as t:
        text_only = ember.Chat(t)
        text_only.set_grammar("root ::= [a-z]+")
        text_only.send("What is it?", max_new=1)
        assert first["prompt_tokens"] >= text_only.stats["prompt_tokens"] + 6


def Image_of(rgb):
    from PIL import Image
    return Image.fromarray(rgb, "RGB")
