// The broken-GGUF corpus (see gguf_builder.h): each file breaks one rule of the format or
// of the importer, and names the message it must be refused with.
#include <string>
#include <vector>

#include "testing/testing.h"
#include "tools/convert/gguf/gguf_builder.h"

namespace ember::testing {
namespace {

using B = GgufBuilder;

std::string Header(uint32_t version, uint64_t tensors, uint64_t kvs) {
  return "GGUF" + B::Pod(version) + B::Pod(tensors) + B::Pod(kvs);
}
std::string Kv(const std::string& key, uint32_t type, const std::string& value) {
  return B::String(key) + B::Pod(type) + value;
}
std::string Info(const std::string& name, const std::vector<uint64_t>& ne, uint32_t type,
                 uint64_t offset) {
  std::string s = B::String(name) + B::Pod<uint32_t>(ne.size());
  for (uint64_t d : ne) s += B::Pod(d);
  return s + B::Pod(type) + B::Pod(offset);
}
// One f32 tensor of 8 values named `name` at `offset`, after a header of one tensor and
// no metadata, the data section padded to 32 bytes.
std::string OneTensor(const std::string& info, uint64_t data_bytes = 64) {
  std::string s = Header(3, 1, 0) + info;
  s.resize((s.size() + 31) / 32 * 32, '\0');
  return s + std::string(data_bytes, '\0');
}
std::string Nested(int depth) {  // arrays of arrays ... of one uint32
  std::string v = B::Array(B::kU32, 1, B::Pod<uint32_t>(7));
  for (int i = 1; i < depth; ++i) v = B::Array(B::kArray, 1, v);
  return v;
}

std::vector<BrokenGguf> ReaderCases() {
  const std::string f32x8 = std::string(32, '\0');
  const std::string ok_kv = Kv("general.name", B::kString, B::String("x"));
  return {
      {"empty", "", "the file is 0 bytes", false},
      {"three_bytes", "GGU", "the file is 3 bytes", false},
      {"wrong_magic", "GGML" + std::string(20, '\0'), "not a GGUF file", false},
      {"big_endian", "GGUF" + std::string("\0\0\0\3", 4) + std::string(16, '\0'),
       "big-endian", false},
      {"version_1", Header(1, 0, 0), "version 1", false},
      {"version_9", Header(9, 0, 0), "version 9 is not one ember reads", false},
      {"truncated_header", "GGUF" + B::Pod<uint32_t>(3) + "\0\0\0\0", "24-byte header",
       false},
      {"absurd_kv_count", Header(3, 0, uint64_t{1} << 60), "metadata entries cannot fit",
       false},
      {"absurd_tensor_count", Header(3, uint64_t{1} << 62, 0), "tensors cannot fit",
       false},
      {"key_past_eof", Header(3, 0, 1) + B::Pod<uint64_t>(1000) + std::string(10, 'k'),
       "the key of metadata entry 0 of 1 runs past", false},
      {"empty_key", Header(3, 0, 1) + Kv("", B::kU32, B::Pod<uint32_t>(1)),
       "has an empty key", false},
      {"type_truncated", Header(3, 0, 1) + B::String("general.x") + "\4\0",
       "the value type runs past", false},
      {"unknown_value_type", Header(3, 0, 1) + Kv("general.x", 13, B::Pod<uint32_t>(1)),
       "unknown value type 13", false},
      {"string_past_eof",
       Header(3, 0, 1) +
           Kv("general.name", B::kString, B::Pod<uint64_t>(uint64_t{1} << 40)),
       "a string runs past the end", false},
      {"scalar_truncated", Header(3, 0, 1) + Kv("general.x", B::kU64, "\1\2\3"),
       "its uint64 value runs past", false},
      {"bool_2", Header(3, 0, 1) + Kv("general.flag", B::kBool, "\2"), "bool value 2",
       false},
      {"array_header_truncated",
       Header(3, 0, 1) + Kv("general.a", B::kArray, "\4\0\0\0\1"),
       "an array header runs past", false},
      {"array_unknown_type",
       Header(3, 0, 1) + Kv("general.a", B::kArray, B::Array(77, 1, "x")),
       "array of unknown value type 77", false},
      {"array_absurd_count",
       Header(3, 0, 1) +
           Kv("general.a", B::kArray, B::Array(B::kU32, uint64_t{1} << 62, "")),
       "cannot fit in the", false},
      {"string_array_past_eof",
       Header(3, 0, 1) +
           Kv("general.a", B::kArray,
              B::Array(B::kString, 2, B::String("ok") + B::Pod<uint64_t>(99))),
       "\"general.a\"[1]: a string runs past", false},
      {"nested_too_deep", Header(3, 0, 1) + Kv("general.a", B::kArray, Nested(9)),
       "nested deeper than 8", false},
      {"duplicate_key", Header(3, 0, 2) + ok_kv + ok_kv, "\"general.name\" appears twice",
       false},
      {"alignment_string",
       Header(3, 0, 1) + Kv("general.alignment", B::kString, B::String("32")),
       "general.alignment is a string; expected an integer", false},
      {"alignment_zero",
       Header(3, 0, 1) + Kv("general.alignment", B::kU32, B::Pod<uint32_t>(0)),
       "general.alignment is 0 (1 to", false},
      {"alignment_48",
       Header(3, 0, 1) + Kv("general.alignment", B::kU32, B::Pod<uint32_t>(48)),
       "general.alignment is 48, not a power of two", false},
      {"tensor_name_past_eof",
       Header(3, 1, 0) + B::Pod<uint64_t>(100) + std::string(40, 'n'),
       "the name of tensor 0 of 1 runs past", false},
      {"tensor_name_empty", OneTensor(Info("", {8}, 0, 0)), "a name of 0 bytes", false},
      {"tensor_name_too_long", OneTensor(Info(std::string(64, 'n'), {8}, 0, 0)),
       "a name of 64 bytes", false},
      {"tensor_info_truncated",
       Header(3, 1, 0) + B::String("tttttttttt") + B::Pod<uint32_t>(4) +
           B::Pod<uint64_t>(8) + B::Pod<uint64_t>(8),
       "tensor \"tttttttttt\": truncated", false},
      {"zero_dims", OneTensor(Info("t", {}, 0, 0)), "has 0 dimensions", false},
      {"five_dims", OneTensor(Info("t", {1, 1, 1, 1, 8}, 0, 0)), "has 5 dimensions",
       false},
      {"dimension_zero", OneTensor(Info("t", {8, 0}, 0, 0)), "dimension 1 is 0", false},
      {"dims_overflow",
       OneTensor(Info("t", {uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0)),
       "multiply past 2^48", false},
      {"unknown_tensor_type", OneTensor(Info("t", {8}, 99, 0)), "unknown GGML type 99",
       false},
      {"removed_tensor_type", OneTensor(Info("t", {32}, 4, 0)), "the removed GGML type 4",
       false},
      {"partial_block", OneTensor(Info("t", {33, 2}, 8, 0)),
       "rows of 33 elements are not whole q8_0 blocks", false},
      {"misaligned_offset", OneTensor(Info("t", {8}, 0, 8)),
       "offset 8 is not a multiple of the alignment 32", false},
      {"data_past_eof", OneTensor(Info("t", {64}, 0, 0), 100),
       "its 256 bytes at offset 0 run past", false},
      {"data_section_past_eof", Header(3, 1, 0) + Info("t", {8}, 0, 0),
       "the data section would start at byte", false},
      {"overlapping_tensors",
       B().Tensor("a", {8}, 0, f32x8, 0).Tensor("b", {16}, 0, f32x8 + f32x8, 0).Build(),
       "tensors \"a\" and \"b\" overlap", false},
      {"duplicate_tensor_names",
       B().Tensor("w", {8}, 0, f32x8).Tensor("w", {8}, 0, f32x8).Build(),
       "tensor name \"w\" appears twice", false},
  };
}

// A readable model that the importer must refuse: the tiny Llama with one change.
std::vector<BrokenGguf> ImporterCases() {
  const ModelSpec spec = TinyModelSpec(32, 1, 4, 2, 48, 300, 64);
  const auto base = [&] { return LlamaGgufBuilder(spec, 0); };
  const auto arch = [&](const char* name) { return LlamaGgufBuilder(spec, 0, name); };
  const auto f32 = [](size_t n, float v) {
    return std::string(reinterpret_cast<const char*>(std::vector<float>(n, v).data()),
                       n * sizeof(float));
  };
  const std::string q8_nan_scale = [&] {
    GgufBuilder b = base();
    std::string block = B::Pod<uint16_t>(0x7E00) + std::string(32, '\1');
    std::string bytes;
    for (int i = 0; i < 32 * 32 / 32; ++i) bytes += block;
    b.Remove("blk.0.attn_q.weight").Tensor("blk.0.attn_q.weight", {32, 32}, 8, bytes);
    return b.Build();
  }();
  GgufBuilder bad_byte = base();
  TokenizerSpec tok = spec.tokenizer;
  tok.pieces[3 + 'A'] = "<0xZZ>";
  bad_byte.Remove("tokenizer.ggml.tokens")
      .Remove("tokenizer.ggml.scores")
      .Remove("tokenizer.ggml.token_type")
      .Remove("tokenizer.ggml.model")
      .Remove("tokenizer.ggml.bos_token_id")
      .Remove("tokenizer.ggml.eos_token_id")
      .Remove("tokenizer.ggml.unknown_token_id");
  AddSentencePieceTokenizer(tok, &bad_byte);
  return {
      {"no_architecture", base().Remove("general.architecture").Build(),
       "missing metadata key general.architecture", true},
      {"unknown_architecture",
       base().Remove("general.architecture").Str("general.architecture", "mamba").Build(),
       "architecture \"mamba\" is not supported", true},
      {"missing_embedding_length", base().Remove("llama.embedding_length").Build(),
       "missing metadata key llama.embedding_length", true},
      {"block_count_string",
       base().Remove("llama.block_count").Str("llama.block_count", "1").Build(),
       "llama.block_count is a string; expected an integer", true},
      {"unknown_arch_key", base().F32("llama.attention.logit_softcapping", 50).Build(),
       "\"llama.attention.logit_softcapping\" is a llama setting ember does not support",
       true},
      {"rope_scaling_yarn",
       base()
           .Str("llama.rope.scaling.type", "yarn")
           .F32("llama.rope.scaling.factor", 4)
           .Build(),
       "RoPE scaling", true},
      {"partial_rotary",
       base()
           .Remove("llama.rope.dimension_count")
           .U32("llama.rope.dimension_count", 4)
           .Build(),
       "RoPE on 4 of the 8 dimensions", true},
      {"experts", base().U32("llama.expert_count", 8).Build(), "mixture of 8 experts",
       true},
      {"missing_tensor", base().Remove("blk.0.ffn_up.weight").Build(),
       "missing tensor 'blk.0.ffn_up.weight'", true},
      {"wrong_shape",
       base()
           .Remove("blk.0.ffn_down.weight")
           .Tensor("blk.0.ffn_down.weight", {32, 48}, 0, std::string(32 * 48 * 4, '\0'))
           .Build(),
       "tensor 'blk.0.ffn_down.weight' has shape (48, 32)", true},
      {"unexpected_tensor",
       base().Tensor("blk.0.extra.weight", {8}, 0, std::string(32, '\0')).Build(),
       "unexpected tensor 'blk.0.extra.weight'", true},
      {"rope_freqs",
       base().Tensor("rope_freqs.weight", {4}, 0, std::string(16, '\0')).Build(),
       "tensor rope_freqs.weight holds 0", true},
      {"unsupported_weight_type",
       base()
           .Remove("blk.0.attn_k.weight")
           .Tensor("blk.0.attn_k.weight", {32, 16}, 9, std::string(16 * 36, '\0'))
           .Build(),
       "is q8_1, which ember does not import", true},
      {"nan_scale", q8_nan_scale, "the scale of block 0 is NaN", true},
      {"no_tokens", base().Remove("tokenizer.ggml.tokens").Build(),
       "missing metadata key tokenizer.ggml.tokens", true},
      {"token_count",
       base()
           .Remove("tokenizer.ggml.tokens")
           .Strings("tokenizer.ggml.tokens", {"a", "b"})
           .Build(),
       "2 tokens in tokenizer.ggml.tokens, but the embedding has 300 rows", true},
      {"bos_out_of_range",
       base()
           .Remove("tokenizer.ggml.bos_token_id")
           .U32("tokenizer.ggml.bos_token_id", 300)
           .Build(),
       "tokenizer.ggml.bos_token_id is 300, outside the 300 tokens", true},
      {"unknown_tokenizer_model",
       base().Remove("tokenizer.ggml.model").Str("tokenizer.ggml.model", "t5").Build(),
       "tokenizer.ggml.model \"t5\" is not supported", true},
      {"gpt2_pre_unknown",
       base()
           .Remove("tokenizer.ggml.model")
           .Str("tokenizer.ggml.model", "gpt2")
           .Str("tokenizer.ggml.pre", "tekken")
           .Build(),
       "tokenizer.ggml.pre 'tekken' is not a pre-tokenizer", true},
      {"byte_token_not_hex", bad_byte.Build(), "is \"<0xZZ>\", not <0xNN>", true},
      {"token_type_unknown",
       base()
           .Remove("tokenizer.ggml.token_type")
           .I32s("tokenizer.ggml.token_type", std::vector<int32_t>(300, 9))
           .Build(),
       "token 0 has unknown token type 9", true},
      {"scores_count",
       base()
           .Remove("tokenizer.ggml.scores")
           .F32s("tokenizer.ggml.scores", {0.0f})
           .Build(),
       "tokenizer.ggml.scores has 1 entries for 300 tokens", true},
      {"rope_theta_1",
       base().Remove("llama.rope.freq_base").F32("llama.rope.freq_base", 1.0f).Build(),
       "llama.rope.freq_base is 1 (more than 1, less than 1e12 allowed)", true},
      {"heads_do_not_divide",
       base()
           .Remove("llama.attention.head_count")
           .U32("llama.attention.head_count", 3)
           .Remove("llama.attention.head_count_kv")
           .U32("llama.attention.head_count_kv", 3)
           .Remove("llama.rope.dimension_count")
           .Build(),
       "embedding length 32, 3 heads, 3 key/value heads and head_dim 10 do not fit",
       true},
      {"sliding_window", base().U32("llama.attention.sliding_window", 16).Build(),
       "sliding-window attention", true},
      {"qwen3_sliding_window",
       arch("qwen3").U32("qwen3.attention.sliding_window", 16).Build(),
       "sliding-window attention (qwen3.attention.sliding_window 16", true},
      {"rope_freqs_tiny",
       base().Tensor("rope_freqs.weight", {4}, 0, f32(4, 1e-16f)).Build(),
       "tensor rope_freqs.weight holds 1e-16 (factors are in [1e-6, 1e6])", true},
      {"rope_freqs_size", base().Tensor("rope_freqs.weight", {3}, 0, f32(3, 1)).Build(),
       "tensor rope_freqs.weight must be 4 f32 values", true},
      {"rope_scaling_below_1", base().F32("llama.rope.scaling.factor", 0.5f).Build(),
       "RoPE scaling (llama.rope.scaling.type 'linear', factor 0.5) is not supported",
       true},
      {"longrope_on_llama",
       base().Tensor("rope_factors_short.weight", {4}, 0, f32(4, 1)).Build(),
       "LongRoPE factors (rope_factors_short.weight, rope_factors_long.weight) are not "
       "supported for llama",
       true},
      {"longrope_without_original",
       arch("phi3")
           .Tensor("rope_factors_short.weight", {4}, 0, f32(4, 1))
           .Tensor("rope_factors_long.weight", {4}, 0, f32(4, 2))
           .Build(),
       "missing metadata key phi3.rope.scaling.original_context_length", true},
      {"attn_factor_without_longrope",
       arch("phi3").F32("phi3.rope.scaling.attn_factor", 1.5f).Build(),
       "phi3.rope.scaling.attn_factor 1.5 without LongRoPE factors", true},
      {"qk_norm_on_qwen2",
       arch("qwen2").Tensor("blk.0.attn_q_norm.weight", {8}, 0, f32(8, 1)).Build(),
       "holds a norm on queries and keys, which ember does not support for qwen2", true},
      {"post_norm_on_qwen3",
       arch("qwen3").Tensor("blk.0.post_ffw_norm.weight", {32}, 0, f32(32, 1)).Build(),
       "holds norms after the attention and FFN, which ember does not support for qwen3",
       true},
      {"partial_rotary_qwen3",
       arch("qwen3")
           .Remove("qwen3.rope.dimension_count")
           .U32("qwen3.rope.dimension_count", 4)
           .Build(),
       "RoPE on 4 of the 8 dimensions of a head (qwen3.rope.dimension_count) is not "
       "supported for qwen3",
       true},
  };
}

}  // namespace

std::vector<BrokenGguf> BrokenGgufCorpus() {
  std::vector<BrokenGguf> cases = ReaderCases();
  for (BrokenGguf& c : ImporterCases()) cases.push_back(std::move(c));
  return cases;
}

}  // namespace ember::testing
