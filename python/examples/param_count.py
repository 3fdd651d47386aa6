#!/usr/bin/env python3
"""A model's parameters counted by kind: embeddings, attention's W_q, W_k, W_v and W_o,
the feed-forward block, norms, the classifier.

What tutorials compute with ``sum(p.numel() for p in model.parameters())`` and a loop
over ``named_parameters()``, from ember's own count (``Model.info``, the count
``ember inspect`` prints): a tied classifier is the token embedding, counted once, as
PyTorch counts a shared tensor.

    python3 param_count.py -m stories260K.ember
"""
import argparse
import sys
from typing import List, Optional

import ember


def parameter_table(info: ember.ModelInfo) -> List[str]:
    """The table's lines: the architecture, then kind, parameters and share, the total."""
    lines = [f"{info.architecture}: {info.n_layers} layers, d_model {info.d_model}, "
             f"{info.n_heads} heads ({info.n_kv_heads} KV heads: {info.attention_kind}, "
             f"head_dim {info.head_dim}), ffn {info.ffn_dim}, vocab {info.vocab_size}, "
             f"context {info.max_context}",
             f"{'kind':<12} {'parameters':>14} {'share':>7}"]
    total = info.total_parameters
    for kind, count in info.parameters.items():
        lines.append(f"{kind:<12} {count:>14,} {100.0 * count / total:>6.2f}%")
    lines.append(f"{'total':<12} {total:>14,} {100.0:>6.2f}%")
    if info.tied_embeddings:
        lines.append("the classifier is tied to the token embedding (counted once)")
    stored = ", ".join(f"{t} {n:,}" for t, n in info.weight_types.items())
    lines.append(f"stored as: {stored} ({info.weight_bytes:,} bytes)")
    return lines


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-m", "--model", required=True, help="model file (.ember)")
    args = parser.parse_args(argv)
    with ember.Model(args.model) as model:
        print("\n".join(parameter_table(model.info)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
