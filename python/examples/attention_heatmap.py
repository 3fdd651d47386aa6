#!/usr/bin/env python3
"""Attention heatmaps of a sentence: one subplot per head of a layer, the tokens on both
axes (query rows, key columns), drawn with seaborn.

What attention-visualization tutorials draw from PyTorch's ``output_attentions=True``,
on ember: the session records the layer's weights in its arena while it prefills, and
``Session.attention()`` is a NumPy view of them, [layers, heads, query, key].

    python3 attention_heatmap.py -m stories260K.ember -p "Lily saw a big red ball" \\
        --layer 4 -o heatmap.png        # or .svg, .pdf
"""
import argparse
import math
import sys
from typing import List, Optional

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
matplotlib.rcParams["svg.fonttype"] = "none"  # an SVG's labels stay text
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import seaborn as sns  # noqa: E402

import ember  # noqa: E402

CELL_INCHES = 3.2  # each head's square
COLUMNS = 4  # heads per row of subplots
DPI = 100


def token_labels(model: ember.Model, ids: List[int]) -> List[str]:
    """Each token's text as the tokenizer adds it; special tokens by id."""
    labels, previous = [], -1
    for token in ids:
        text = model.token_bytes(token, previous).decode("utf-8", "replace")
        if token == model.bos or not text.strip():
            text = f"<{token}>" if token == model.bos else repr(text)
        labels.append(text.strip())
        previous = token
    return labels


def draw(model: ember.Model, prompt: str, layer: Optional[int], output: str) -> str:
    info = model.info
    layer = info.n_layers - 1 if layer is None else layer
    probe = ember.Session(model, context=min(model.max_context, 4096))
    ids = probe.tokenize(prompt)
    probe.close()
    # Only what is drawn is recorded: one layer, its heads, the prompt's positions.
    selection = ember.AttentionSelection(first_layer=layer, num_layers=1)
    session = ember.Session(model, context=max(len(ids), 1), attention=selection)
    weights = session.attention(ids)[0]  # [heads, query, key]
    heads = weights.shape[0]
    columns = min(COLUMNS, heads)
    rows = math.ceil(heads / columns)
    figure, axes = plt.subplots(rows, columns, squeeze=False, dpi=DPI,
                                figsize=(columns * CELL_INCHES, rows * CELL_INCHES))
    labels = token_labels(model, ids)
    hidden = np.triu(np.ones_like(weights[0], dtype=bool), k=1) if info.causal else None
    for head, axis in enumerate(axes.flat):
        if head >= heads:
            axis.axis("off")
            continue
        sns.heatmap(weights[head], ax=axis, mask=hidden, vmin=0.0, vmax=1.0,
                    cmap="viridis", square=True, cbar=False,
                    xticklabels=labels, yticklabels=labels)
        axis.set_title(f"head {head}", fontsize=9)
        axis.tick_params(labelsize=6)
    figure.colorbar(axes.flat[0].collections[0], ax=axes.ravel().tolist(), shrink=0.6,
                    label="attention weight")
    figure.suptitle(f"{info.architecture}, layer {layer}: how much each token (row) "
                    f"attends to each earlier one (column)", fontsize=10)
    figure.savefig(output, dpi=DPI)
    plt.close(figure)
    return (f"wrote {output}: layer {layer}, {heads} heads, {len(ids)} tokens "
            f"({' '.join(labels)})")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-m", "--model", required=True, help="model file (.ember)")
    parser.add_argument("-p", "--prompt", default="Lily saw a big red ball in the park",
                        help="the sentence")
    parser.add_argument("--layer", type=int, default=None,
                        help="the layer to draw (default: the last)")
    parser.add_argument("-o", "--output", required=True,
                        help="image file: .png, .svg, .pdf (matplotlib's formats)")
    args = parser.parse_args(argv)
    with ember.Model(args.model) as model:
        print(draw(model, args.prompt, args.layer, args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
