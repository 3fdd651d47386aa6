#!/usr/bin/env python3
"""Oracle: Qwen3-Reranker-style rerankers (issue 39). hf_families.py's float64 Qwen3
reference (causal), random weights saved as a Hugging Face directory with Qwen3's real
tokenizer, scored as Qwen3-Reranker's model card does: its system prefix, then
"<Instruct>: {instruction}\\n<Query>: {query}\\n<Document>: {doc}", then its assistant
suffix, each part tokenized on its own and joined; the score is the last position's
logit of "yes" minus that of "no" (sigmoid of it: the card's P(yes)).

`ember convert --hf DIR --rerank qwen3` of the causal LM (its untied head replaced by the
yes-minus-no row) and of the same weights as Qwen3ForSequenceClassification (a one-row
`score`, as the card's seq-cls conversion stores it) + `ember rerank` must give the
reference's scores and order, with the default and with a given instruction; q8 within
a stated bound.
"""
import os
import re

import family_oracle as fam

PREFIX = ("<|im_start|>system\nJudge whether the Document meets the requirements based on "
          "the Query and the Instruct provided. Note that the answer can only be \"yes\" or "
          "\"no\".<|im_end|>\n<|im_start|>user\n")
SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
DEFAULT = "Given a web search query, retrieve relevant passages that answer the query"
YES, NO = 9693, 2152  # Qwen3's "yes" and "no"
QUERY = "What is the capital of China?"
DOCS = ["The capital of China is Beijing.",
        "Gravity is a force that attracts two bodies towards each other. It gives weight "
        "to physical objects and is responsible for the movement of planets around the sun.",
        "北京是中国的首都。  ",
        "yes\nno",
        "Paris {query} is <b>the</b> capital of France   \n"]


def reference_ids(ember, path, instruction, doc):
    """The model card's tokenization: prefix, the formatted pair and suffix apart."""
    def tok(text):
        out = ember.run("tokenize", "-m", path, "-p", text, "--no-bos", "--parse-special")
        return [int(t) for t in out.split()]
    pair = f"<Instruct>: {instruction}\n<Query>: {QUERY}\n<Document>: {doc}"
    return tok(PREFIX) + tok(pair) + tok(SUFFIX)


def rerank(ember, path, *flags):
    out = ember.run("rerank", "-m", path, "--query", QUERY,
                    *sum((["-p", d] for d in DOCS), []), *flags)
    got, order = {}, []
    # A line a document starts ("score<TAB>index<TAB>..."; documents hold newlines).
    for score, index in re.findall(r"^(-?[0-9.]+(?:e[-+]?[0-9]+)?|-?inf|nan)\t([0-9]+)\t",
                                   out, re.M):
        got[int(index) - 1] = float(score)
        order.append(int(index) - 1)
    return [got[i] for i in range(len(DOCS))], order


def main():
    args, torch, np, ember, report = fam.begin("qwen_rerank", __doc__)
    hf = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"],
          "vocab_size": fam.REAL_VOCAB["qwen3"], "hidden_size": 64,
          "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
          "num_key_value_heads": 2, "head_dim": 32, "max_position_embeddings": 512,
          "rms_norm_eps": 1e-6, "hidden_act": "silu", "rope_theta": 1000000.0,
          "attention_bias": False, "tie_word_embeddings": False,
          "use_sliding_window": False, "bos_token_id": 151643, "eos_token_id": 151645,
          "torch_dtype": "float32"}
    c = fam.ref.resolve(torch, hf)
    torch.manual_seed(29)
    model = fam.ref.modules(torch)(c).double().eval()
    fam.randomize(torch, model, "F32")
    causal = os.path.join(ember.dir, "qwen3_reranker")
    fam.save(causal, hf, model, "F32")
    fam.real_tokenizer(args, "qwen3")(causal)

    path = ember.path("qwen3_reranker.ember")
    ember.run("convert", "--hf", causal, "--rerank", "qwen3", "-o", path)
    info = ember.run("inspect", "-m", path)
    report.check("inspect: a reranker's prompt with its default instruction",
                 f"default instruction '{DEFAULT}'" in info, "")
    # The vocabulary head is dropped: the model's parameters, less lm_head, plus the
    # head's row and bias.
    total = sum(p.numel() for p in model.parameters()) - model.lm_head.weight.numel() + 65
    report.check(f"inspect: {total} parameters (lm_head dropped, a head of 65)",
                 re.search(rf"^parameters +{total}$", info, re.M) is not None, "")

    def scores(instruction, head=None):
        out = []
        for doc in DOCS:
            ids = reference_ids(ember, path, instruction, doc)
            with torch.no_grad():
                if head is None:
                    logits = model(torch.tensor([ids]))[0][-1]
                    out.append(float(logits[YES] - logits[NO]))
                else:
                    out.append(float(head @ model.hidden(torch.tensor([ids]))[0][-1]))
        return out

    def check(what, got, order, ref):
        report.compare(f"{what}: {len(DOCS)} scores", got, ref,
                       2e-5 * max(1.0, max(abs(r) for r in ref)), 1e-4)
        report.check(f"{what}: best first",
                     order == sorted(range(len(DOCS)), key=lambda i: -ref[i]), "")

    ref = scores(DEFAULT)
    got, order = rerank(ember, path, "-t", 2)
    check("causal LM, default instruction, 2 threads", got, order, ref)
    task = "Given a question, find the passage that answers it {query}"
    got, order = rerank(ember, path, "--instruction", task)
    check("causal LM, --instruction", got, order, scores(task))

    # The same weights as the card's seq-cls conversion: score = W_yes - W_no, tied.
    head = (model.lm_head.weight[YES] - model.lm_head.weight[NO]).detach().clone()
    seq = dict(hf, architectures=["Qwen3ForSequenceClassification"], num_labels=1,
               tie_word_embeddings=True)
    seq_dir = os.path.join(ember.dir, "qwen3_reranker_seq_cls")

    extra = {"score.weight": head[None].float().numpy()}
    model.tied = True  # save without lm_head
    fam.save(seq_dir, seq, model, "F32", extra=extra)
    model.tied = False
    fam.real_tokenizer(args, "qwen3")(seq_dir)
    seq_path = ember.path("qwen3_reranker_seq_cls.ember")
    ember.run("convert", "--hf", seq_dir, "--rerank", "qwen3", "-o", seq_path)
    got, order = rerank(ember, seq_path)
    check("Qwen3ForSequenceClassification", got, order, scores(DEFAULT, head.double()))

    q8 = ember.path("qwen3_reranker_q8.ember")
    ember.run("convert", "--hf", causal, "--rerank", "qwen3", "--dtype", "q8", "-o", q8)
    got, _ = rerank(ember, q8)
    worst = max(abs(g - r) for g, r in zip(got, ref))
    spread = max(ref) - min(ref)
    report.check(f"q8: largest score error {worst:.4f}, 5% of the scores' spread "
                 f"{spread:.4f} at most", worst <= 0.05 * spread)
    report.finish(ember)


if __name__ == "__main__":
    main()
