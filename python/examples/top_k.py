#!/usr/bin/env python3
"""The next token's likeliest candidates after a prompt, with their probabilities.

What the classic "GPT-2 next-token prediction" tutorial shows with PyTorch
(``torch.softmax(model(ids).logits[0, -1], -1).topk(k)``), on ember: the prompt is
prefilled once and the probabilities are the softmax of the last position's logits, a
NumPy view of the session's arena.

    python3 top_k.py -m gpt2.ember -p "The quick brown fox jumps over the" -k 10
"""
import argparse
import json
import sys
from typing import List, Optional

import ember


def top_k_table(model: ember.Model, prompt: str, k: int) -> List[str]:
    """The table's lines: a header, then rank, token id, token text and probability."""
    context = min(model.max_context, 4096)
    session = ember.Session(model, context=context)
    ids = session.tokenize(prompt)
    if not ids:
        raise SystemExit("top_k.py: the prompt has no tokens")
    session.prefill(ids[-context:])
    lines = [f"prompt: {json.dumps(prompt, ensure_ascii=False)} ({len(ids)} tokens), "
             f"model: {model.info.architecture}",
             f"{'rank':>4}  {'token id':>8}  {'token':<16}  {'probability':>11}"]
    for rank, (token, text, probability) in enumerate(session.top_k(k), start=1):
        shown = json.dumps(text, ensure_ascii=False)  # spaces and newlines visible
        if not text and token in (model.eos, model.bos):  # control tokens write nothing
            shown = "<eos>" if token == model.eos else "<bos>"
        lines.append(f"{rank:>4}  {token:>8}  {shown:<16}  {probability:>11.6f}")
    return lines


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-m", "--model", required=True, help="model file (.ember)")
    parser.add_argument("-p", "--prompt", default="The quick brown fox jumps over the",
                        help="the text whose next token is predicted")
    parser.add_argument("-k", type=int, default=10, help="candidates to show (10)")
    args = parser.parse_args(argv)
    with ember.Model(args.model) as model:
        print("\n".join(top_k_table(model, args.prompt, args.k)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
