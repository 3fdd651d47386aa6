// TestModels.java: the small models EmbedTest and ToolCallTest convert with the CLI, as
// python/tests (test_embed.py, test_ember.py) make theirs: a random encoder written as a
// Hugging Face directory (with named prompts, or made a cross-encoder or a Qwen3-Reranker
// style causal reranker), and a random Llama with a Hermes tool-call template.
package dev.ember;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

final class TestModels {
  private TestModels() {}

  /**
   * A Hermes-style template (Qwen's {@code <tool_call>} tags), test_ember.py's: its tools
   * in a system turn, each call of an assistant turn as a tagged JSON object.
   */
  static final String HERMES_TEMPLATE = "{%- if tools %}<|im_start|>system\n"
      + "Tools:{% for tool in tools %} {{ tool | tojson }}{% endfor %}\n"
      + "Call one as <tool_call>{\"name\": ..., \"arguments\": ...}</tool_call><|im_end|>\n"
      + "{% endif %}{% for m in messages %}<|im_start|>{{ m.role }}\n"
      + "{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>\n"
      + "{{ {\"name\": c.function.name, \"arguments\": c.function.arguments} | tojson }}\n"
      + "</tool_call>{% endfor %}{% else %}{{ m.content }}{% endif %}<|im_end|>\n"
      + "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
      + "{% endif %}";

  /** A random Llama (a byte-fallback tokenizer that spells any text) with the template. */
  static Path toolsModel(Path dir) throws Exception {
    Path template = dir.resolve("hermes.jinja");
    Files.write(template, HERMES_TEMPLATE.getBytes(StandardCharsets.UTF_8));
    Path path = dir.resolve("tools.ember");
    Cli.run("convert", "--synthetic", "custom", "--dim", "64", "--hidden", "128", "--layers",
            "1", "--heads", "2", "--vocab", "300", "--ctx", "512", "--chat-template",
            template.toString(), "-o", path.toString());
    return path;
  }

  /**
   * A small post-LN encoder (random weights, a byte-level BPE of 300 pieces) converted by
   * `ember convert --hf`: mean pooling and Normalize, or as a reranker cls pooling and a
   * head of one output (test_embed.py's write_embedder, its weights from Java's Random).
   */
  static Path encoder(Path dir, boolean reranker) throws Exception {
    String name = reranker ? "cross" : "encoder";
    writeModel(dir.resolve(name), reranker ? Kind.CROSS : Kind.EMBEDDER);
    return convert(dir.resolve(name), dir.resolve(name + ".ember"));
  }

  /**
   * The encoder with named prompts (config_sentence_transformers.json, as in test_embed.py):
   * "query" puts "query: " before a text, "document" (the default) "passage: ".
   */
  static Path promptedEncoder(Path dir) throws Exception {
    Path source = dir.resolve("prompted");
    writeModel(source, Kind.EMBEDDER);
    write(source.resolve("config_sentence_transformers.json"),
          "{\"prompts\": {\"query\": \"query: \", \"document\": \"passage: \"}, "
              + "\"default_prompt_name\": \"document\"}");
    return convert(source, dir.resolve("prompted.ember"));
  }

  /**
   * A Qwen3-Reranker-style reranker: the encoder's layers made a causal LM (RoPE, a context
   * of 512 for the prompt) whose vocabulary has "yes" and "no", converted by `ember convert
   * --rerank qwen3` into a head of logit("yes") - logit("no") with Qwen3-Reranker's prompt.
   */
  static Path promptedReranker(Path dir) throws Exception {
    writeModel(dir.resolve("causal"), Kind.CAUSAL);
    return convert(dir.resolve("causal"), dir.resolve("causal.ember"), "--rerank", "qwen3");
  }

  private enum Kind { EMBEDDER, CROSS, CAUSAL }

  /** `ember convert --hf source [flags] -o path`. */
  private static Path convert(Path source, Path path, String... flags) throws Exception {
    List<String> args = new ArrayList<>(Arrays.asList("convert", "--hf", source.toString()));
    args.addAll(Arrays.asList(flags));
    args.addAll(Arrays.asList("-o", path.toString()));
    Cli.run(args.toArray(new String[0]));
    return path;
  }

  /** The Hugging Face directory of a model of that kind. */
  private static void writeModel(Path source, Kind kind) throws Exception {
    Files.createDirectories(source);
    Random rng = new Random(3);
    int d = 32, f = 64, vocab = 300, layers = 2;
    Map<String, Tensor> tensors = new LinkedHashMap<>();
    tensors.put("token_embd.weight", new Tensor(rng, 0, 0.5, vocab, d));
    if (kind != Kind.CAUSAL) tensors.put("position_embd.weight", new Tensor(rng, 0, 0.3, 64, d));
    for (int i = 0; i < layers; ++i) {
      String blk = "blk." + i + ".";
      for (String name : new String[] {"attn_q", "attn_k", "attn_v", "attn_output"}) {
        tensors.put(blk + name + ".weight", new Tensor(rng, 0, 0.2, d, d));
      }
      tensors.put(blk + "ffn_up.weight", new Tensor(rng, 0, 0.2, f, d));
      tensors.put(blk + "ffn_down.weight", new Tensor(rng, 0, 0.2, d, f));
      for (String name : new String[] {"attn_norm", "ffn_norm"}) {
        tensors.put(blk + name + ".weight", new Tensor(rng, 1, 0.1, d));
        tensors.put(blk + name + ".bias", new Tensor(rng, 0, 0.1, d));
      }
    }
    if (kind == Kind.CROSS) {
      tensors.put("cls.weight", new Tensor(rng, 0, 0.2, d, d));
      tensors.put("cls.bias", new Tensor(rng, 0, 0.1, d));
      tensors.put("cls.output.weight", new Tensor(rng, 0, 0.5, 1, d));
      tensors.put("cls.output.bias", new Tensor(rng, 0, 0.1, 1));
    }
    writeSafetensors(source.resolve("model.safetensors"), tensors);
    String config = "{\"model_type\": \"ember\", \"architecture\": \""
        + (kind == Kind.CAUSAL ? "custom" : "encoder") + "\", \"d_model\": " + d
        + ", \"n_layers\": " + layers + ", \"n_heads\": 4, \"ffn_dim\": " + f
        + ", \"vocab_size\": " + vocab + ", \"max_context\": "
        + (kind == Kind.CAUSAL ? 512 : 64) + ", \"norm\": \"layernorm\", "
        + "\"norm_placement\": \"post\", \"final_norm\": false, \"ffn\": \"plain\", "
        + "\"activation\": \"gelu_erf\", \"tied_classifier\": true, ";
    switch (kind) {
      case EMBEDDER:
        config += "\"positions\": \"learned\", \"mask\": \"bidirectional\", "
            + "\"pooling\": \"mean\", \"normalize\": true}";
        break;
      case CROSS:
        config += "\"positions\": \"learned\", \"mask\": \"bidirectional\", "
            + "\"pooling\": \"cls\", \"normalize\": false, \"labels\": 1, "
            + "\"label_pooler\": true, \"eos_token_id\": 299}";
        break;
      default:
        config += "\"positions\": \"rope\", \"mask\": \"causal\"}";
    }
    write(source.resolve("config.json"), config);
    writeByteLevelBpe(source, vocab, kind == Kind.CAUSAL);
  }

  /** Normal values (mean, std) of a shape, as float32. */
  private static final class Tensor {
    final int[] shape;
    final float[] values;

    Tensor(Random rng, double mean, double std, int... shape) {
      this.shape = shape;
      int n = 1;
      for (int s : shape) n *= s;
      values = new float[n];
      for (int i = 0; i < n; ++i) values[i] = (float) (mean + std * rng.nextGaussian());
    }
  }

  /** safetensors: an 8-byte little-endian header length, the JSON header, the data. */
  private static void writeSafetensors(Path path, Map<String, Tensor> tensors)
      throws Exception {
    StringBuilder header = new StringBuilder("{");
    ByteArrayOutputStream data = new ByteArrayOutputStream();
    for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
      Tensor t = e.getValue();
      ByteBuffer bytes = ByteBuffer.allocate(4 * t.values.length).order(ByteOrder.LITTLE_ENDIAN);
      bytes.asFloatBuffer().put(t.values);
      StringBuilder shape = new StringBuilder();
      for (int s : t.shape) shape.append(shape.length() > 0 ? ", " : "").append(s);
      if (header.length() > 1) header.append(", ");
      header.append('"').append(e.getKey()).append("\": {\"dtype\": \"F32\", \"shape\": [")
          .append(shape).append("], \"data_offsets\": [").append(data.size()).append(", ")
          .append(data.size() + bytes.capacity()).append("]}");
      data.write(bytes.array());
    }
    byte[] text = header.append('}').toString().getBytes(StandardCharsets.UTF_8);
    ByteBuffer length = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    length.putLong(text.length);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(length.array());
    out.write(text);
    data.writeTo(out);
    Files.write(path, out.toByteArray());
  }

  /**
   * vocab.json and merges.txt of a GPT-2 byte-level BPE: the 256 bytes as GPT-2 spells
   * them (printable ones as themselves, the rest from U+0100 on), four merges (with
   * yesNo three more, making "yes" and "no"), then {@code <extra_N>} pieces up to the
   * vocabulary's size.
   */
  private static void writeByteLevelBpe(Path dir, int vocab, boolean yesNo) throws Exception {
    String[] alphabet = new String[256];
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      boolean printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
      alphabet[b] = String.valueOf((char) (printable ? b : 256 + extra++));
    }
    String[][] merges = {{"t", "h"}, {"e", "r"}, {"i", "n"}, {"a", "n"}};
    if (yesNo) {
      merges = new String[][] {{"t", "h"}, {"e", "r"}, {"i", "n"}, {"a", "n"}, {"y", "e"},
                               {"ye", "s"}, {"n", "o"}};
    }
    StringBuilder json = new StringBuilder("{");
    int id = 0;
    for (; id < 256; ++id) piece(json, alphabet[id], id);
    for (String[] m : merges) piece(json, m[0] + m[1], id++);
    for (; id < vocab; ++id) piece(json, "<extra_" + id + ">", id);
    write(dir.resolve("vocab.json"), json.append('}').toString());
    StringBuilder lines = new StringBuilder("#version: 0.2\n");
    for (String[] m : merges) lines.append(m[0]).append(' ').append(m[1]).append('\n');
    write(dir.resolve("merges.txt"), lines.toString());
  }

  private static void piece(StringBuilder json, String piece, int id) {
    if (json.length() > 1) json.append(", ");
    json.append('"');
    for (char c : piece.toCharArray()) {
      if (c == '"' || c == '\\') json.append('\\');
      json.append(c);
    }
    json.append("\": ").append(id);
  }

  private static void write(Path path, String text) throws Exception {
    Files.write(path, text.getBytes(StandardCharsets.UTF_8));
  }
}
