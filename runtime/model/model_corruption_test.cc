// Model loading of corrupted files: each of a table of broken fields (counts, offsets,
// shapes, dtypes, config values) is refused with its own message, and nothing crashes
// (the tokenizer's tables: tokenizer_corruption_test.cc).
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model_generated.h"
#include "runtime/model/model.h"
#include "runtime/model/model_test_util.h"
#include "runtime/model/model_writer.h"
#include "runtime/model/tensor_names.h"
#include "testing/testing.h"

namespace ember {
namespace {

using testing::Bytes;
using testing::Corruption;
using testing::CorruptionTest;
using testing::LoadError;
using testing::SetLength;

TEST_P(CorruptionTest, IsRefusedWithItsOwnMessage) {
  ModelSpec spec = testing::TinyModelSpec();
  if (GetParam().spec) GetParam().spec(spec);
  std::vector<uint8_t> raw;
  const Status written = SerializeModel(spec, &raw);
  ASSERT_TRUE(written.ok()) << written.message();
  Bytes bytes(raw);
  if (GetParam().mutate) GetParam().mutate(bytes);
  const std::string error = LoadError(bytes);
  EXPECT_NE(error.find(GetParam().expected_message), std::string::npos)
      << "error was: " << error;
}

const char* kQ = "blk.0.attn_q.weight";

// Changes the shape of tensor `name` in the spec, resizing its values to match.
void Reshape(ModelSpec& spec, const std::string& name, std::vector<uint64_t> shape) {
  for (TensorSpec& t : spec.tensors) {
    if (t.name != name) continue;
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    t.shape = shape;
    t.values.assign(n, 0.5f);
  }
}

void AddTensor(ModelSpec& spec, const std::string& name, std::vector<uint64_t> shape) {
  spec.tensors.push_back(TensorSpec{name, {}, {}, DType::kF32, {}});
  Reshape(spec, name, shape);
}

// Makes the first layer's W_q a q8 tensor (the writer packs it in the QuantPanels
// layout).
void QuantizeQ(ModelSpec& spec) {
  for (TensorSpec& t : spec.tensors) {
    if (t.name == kQ) t.dtype = DType::kQ8;
  }
}

// A model whose rows are whole K-quant super-blocks (d_model 256), W_q of layer 0 q4_k.
void KQuantQ(ModelSpec& spec) {
  spec = testing::TinyModelSpec(256, 1, 4, 2, 256, 300, 16);
  for (TensorSpec& t : spec.tensors) {
    if (t.name == kQ) t.dtype = DType::kQ4K;
  }
}

fb::Config* Config(Bytes& b) { return b.root()->mutable_config(); }

INSTANTIATE_TEST_SUITE_P(
    Loader, CorruptionTest,
    ::testing::Values(
        Corruption{"truncated_header", [](Bytes& b) { b.Truncate(6); }, "too short"},
        Corruption{"truncated_directory", [](Bytes& b) { b.Truncate(200); }, "truncated"},
        Corruption{"truncated_tensor_data", [](Bytes& b) { b.Truncate(b.size() - 100); },
                   "past the end of the file"},
        Corruption{"wrong_identifier", [](Bytes& b) { memcpy(b.data() + 8, "GGUF", 4); },
                   "file identifier"},
        Corruption{"directory_bytes_flipped",
                   [](Bytes& b) {
                     // Point the root table offset far outside the buffer.
                     const uint32_t bad = 0x7FFFFFF0;
                     memcpy(b.data() + 4, &bad, 4);
                   },
                   "verification failed"},
        Corruption{"offset_past_end",
                   [](Bytes& b) { b.tensor(kQ)->mutate_offset(uint64_t{1} << 40); },
                   "past the end of the file"},
        Corruption{"offset_plus_size_overflows",
                   [](Bytes& b) { b.tensor(kQ)->mutate_offset(~uint64_t{63}); },
                   "past the end of the file"},
        Corruption{
            "offset_misaligned",
            [](Bytes& b) { b.tensor(kQ)->mutate_offset(b.tensor(kQ)->offset() + 4); },
            "is not a multiple of 64"},
        Corruption{"offset_inside_directory",
                   [](Bytes& b) { b.tensor(kQ)->mutate_offset(0); },
                   "into the directory"},
        Corruption{"tensors_overlap",
                   [](Bytes& b) {
                     b.tensor(kQ)->mutate_offset(
                         b.tensor("blk.0.attn_k.weight")->offset());
                   },
                   "overlap"},
        Corruption{"size_disagrees_with_shape",
                   [](Bytes& b) { b.tensor(kQ)->mutate_size(b.tensor(kQ)->size() - 4); },
                   "disagrees with its f32 shape"},
        Corruption{"shape_disagrees_with_size",
                   [](Bytes& b) { b.tensor(kQ)->mutable_shape()->Mutate(0, 31); },
                   "disagrees with its f32 shape"},
        Corruption{"group_size_on_f32",
                   [](Bytes& b) { EXPECT_TRUE(b.tensor(kQ)->mutate_group_size(32)); },
                   "f32 tensors have no quantization groups (group size 32)"},
        Corruption{"zero_dimension",
                   [](Bytes& b) { b.tensor(kQ)->mutable_shape()->Mutate(1, 0); },
                   "dimension 1 is zero"},
        Corruption{"huge_dimensions",
                   [](Bytes& b) {
                     b.tensor(kQ)->mutable_shape()->Mutate(0, uint64_t{1} << 40);
                     b.tensor(kQ)->mutable_shape()->Mutate(1, uint64_t{1} << 40);
                   },
                   "element count overflows"},
        Corruption{
            "unknown_dtype",
            [](Bytes& b) { b.tensor(kQ)->mutate_dtype(static_cast<fb::DType>(200)); },
            "unknown dtype 200"},
        Corruption{
            "unknown_layout",
            [](Bytes& b) { b.tensor(kQ)->mutate_layout(static_cast<fb::Layout>(200)); },
            "unknown layout 200"},
        // Heads need not divide d_model (an explicit head_dim), but must fit W_q.
        Corruption{"heads_disagree_with_q_weights",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_n_heads(8); },
                   "tensor 'blk.0.attn_q.weight' has shape (32, 32) with 2 dims; expected "
                   "(64, 32)"},
        Corruption{"kv_heads_do_not_divide_heads",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_n_kv_heads(3); },
                   "n_kv_heads 3 does not divide n_heads 4"},
        Corruption{"zero_vocab",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_vocab_size(0); },
                   "vocab_size = 0"},
        Corruption{"zero_context",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_max_context(0); },
                   "max_context = 0"},
        Corruption{"zero_layers",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_n_layers(0); },
                   "n_layers = 0"},
        Corruption{"vocab_disagrees_with_tokenizer",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_vocab_size(301); },
                   "piece offsets for a vocabulary of 301"},
        Corruption{"extra_layer_in_config",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_n_layers(3); },
                   "missing tensor 'blk.2.attn_norm.weight'"},
        Corruption{"unknown_activation",
                   [](Bytes& b) {
                     b.root()->mutable_config()->mutate_activation(
                         static_cast<fb::Activation>(42));
                   },
                   "a value this build does not know"},
        Corruption{"bad_norm_eps",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_norm_eps(-1.0f); },
                   "norm_eps"},
        Corruption{"odd_head_dim_with_rope",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_head_dim(7); },
                   "RoPE needs an even head_dim"},
        Corruption{"wrong_format_version",
                   [](Bytes& b) { b.root()->mutate_format_version(2); },
                   "format version 2"},
        Corruption{"renamed_tensor",
                   [](Bytes& b) {
                     // "blk.0.attn_q.weight" -> "blk.0.attn_x.weight": q is missing.
                     auto* name = const_cast<flatbuffers::String*>(b.tensor(kQ)->name());
                     const_cast<char*>(name->c_str())[11] = 'x';
                   },
                   "missing tensor 'blk.0.attn_q.weight'"},
        Corruption{"bos_outside_vocab",
                   [](Bytes& b) { b.root()->mutable_tokenizer()->mutate_bos_id(300); },
                   "special token id 300 outside the vocabulary"},
        Corruption{"piece_offsets_decrease",
                   [](Bytes& b) {
                     b.root()->mutable_tokenizer()->mutable_piece_offsets()->Mutate(5, 0);
                   },
                   "piece offsets decrease"},
        Corruption{"sorted_ids_out_of_order",
                   [](Bytes& b) {
                     auto* ids = b.root()->mutable_tokenizer()->mutable_sorted_ids();
                     const uint32_t first = ids->Get(0);
                     ids->Mutate(0, ids->Get(1));
                     ids->Mutate(1, first);
                   },
                   "sorted ids out of order"},
        Corruption{"sorted_id_out_of_range",
                   [](Bytes& b) {
                     b.root()->mutable_tokenizer()->mutable_sorted_ids()->Mutate(3, 1000);
                   },
                   "sorted id 1000 is out of range"},
        Corruption{"token_type_unknown",
                   [](Bytes& b) {
                     b.root()->mutable_tokenizer()->mutable_types()->Mutate(
                         10, static_cast<fb::TokenType>(99));
                   },
                   "unknown type 99"},
        // Dimensions in the config: zero, "negative" (a uint32 that was -1 somewhere)
        // and huge.
        Corruption{"d_model_too_large",
                   [](Bytes& b) { Config(b)->mutate_d_model(1u << 21); },
                   "d_model = 2097152 (1 to 1048576 allowed)"},
        Corruption{"zero_heads", [](Bytes& b) { Config(b)->mutate_n_heads(0); },
                   "n_heads = 0"},
        Corruption{"zero_head_dim", [](Bytes& b) { Config(b)->mutate_head_dim(0); },
                   "head_dim = 0"},
        Corruption{"zero_kv_heads", [](Bytes& b) { Config(b)->mutate_n_kv_heads(0); },
                   "n_kv_heads = 0"},
        Corruption{"negative_ffn_dim",
                   [](Bytes& b) { Config(b)->mutate_ffn_dim(0xFFFFFFFFu); },
                   "ffn_dim = 4294967295"},
        Corruption{"negative_context",
                   [](Bytes& b) { Config(b)->mutate_max_context(0xFFFFFFFFu); },
                   "max_context = 4294967295"},
        Corruption{"huge_vocab",
                   [](Bytes& b) { Config(b)->mutate_vocab_size(1u << 30); },
                   "vocab_size = 1073741824 (1 to 16777216 allowed)"},
        Corruption{"too_many_layers", [](Bytes& b) { Config(b)->mutate_n_layers(5000); },
                   "n_layers = 5000 (1 to 4096 allowed)"},
        Corruption{"heads_times_head_dim_too_large",
                   [](Bytes& b) { Config(b)->mutate_head_dim(1u << 20); },
                   "n_heads x head_dim is too large"},
        Corruption{"nan_norm_eps", [](Bytes& b) { Config(b)->mutate_norm_eps(NAN); },
                   "norm_eps nan outside (0, 1)"},
        Corruption{"zero_rope_theta", [](Bytes& b) { Config(b)->mutate_rope_theta(0); },
                   "rope_theta 0 outside (1, 1e12)"},
        Corruption{"unknown_norm_kind",
                   [](Bytes& b) { Config(b)->mutate_norm(static_cast<fb::NormKind>(200)); },
                   "an enum (norm, placement, ffn, activation, positions, rope pairing or "
                   "mask) has a value this build does not know"},
        Corruption{"unknown_mask",
                   [](Bytes& b) {
                     Config(b)->mutate_mask(static_cast<fb::AttentionMask>(200));
                   },
                   "rope pairing or mask) has a value this build does not know"},
        Corruption{"format_version_zero", [](Bytes& b) { b.root()->mutate_format_version(0); },
                   "format version 0 (this build reads version 1)"},
        // The directory's size prefix.
        Corruption{"directory_size_past_end",
                   [](Bytes& b) {
                     const uint32_t size = static_cast<uint32_t>(b.size());
                     memcpy(b.data(), &size, 4);
                   },
                   "truncated: the directory says"},
        Corruption{"directory_size_zero",
                   [](Bytes& b) {
                     const uint32_t size = 8;  // the root offset and identifier only
                     memcpy(b.data(), &size, 4);
                   },
                   "verification failed"},
        // Tensor entries: shapes, dtypes and layouts.
        Corruption{"negative_dimension",
                   [](Bytes& b) { b.tensor(kQ)->mutable_shape()->Mutate(1, ~uint64_t{0}); },
                   "tensor 'blk.0.attn_q.weight': element count overflows"},
        Corruption{"no_dimensions",
                   [](Bytes& b) { SetLength(b.tensor(kQ)->shape(), 0); },
                   "tensor 'blk.0.attn_q.weight': 0 dimensions (1 to 4 allowed)"},
        Corruption{"too_many_dimensions",
                   [](Bytes& b) { SetLength(b.tensor(kQ)->shape(), 5); },
                   "tensor 'blk.0.attn_q.weight': 5 dimensions (1 to 4 allowed)"},
        Corruption{"dense_dtype_with_quantized_layout",
                   [](Bytes& b) { b.tensor(kQ)->mutate_layout(fb::Layout::QuantRows); },
                   "tensor 'blk.0.attn_q.weight': f32 tensors must be row-major"},
        Corruption{"retired_quant_layout",
                   [](Bytes& b) { b.tensor(kQ)->mutate_layout(fb::Layout::QuantPanelsV1); },
                   "tensor 'blk.0.attn_q.weight': q8 tensor in the retired QuantPanelsV1 "
                   "layout (an earlier ember wrote it): convert the model again",
                   QuantizeQ},
        Corruption{"quantized_row_major",
                   [](Bytes& b) { b.tensor(kQ)->mutate_layout(fb::Layout::RowMajor); },
                   "tensor 'blk.0.attn_q.weight': q8 tensors must be 2-D with the "
                   "QuantPanels layout",
                   QuantizeQ},
        Corruption{"quantized_reserved_layout",
                   [](Bytes& b) { b.tensor(kQ)->mutate_layout(fb::Layout::QuantRows); },
                   "tensor 'blk.0.attn_q.weight': q8 tensors must be 2-D with the "
                   "QuantPanels layout",
                   QuantizeQ},
        Corruption{"kquant_group_size",
                   [](Bytes& b) { EXPECT_TRUE(b.tensor(kQ)->mutate_group_size(32)); },
                   "tensor 'blk.0.attn_q.weight': q4_k group size 32 (the KQuantPanels "
                   "layout has super-blocks of 256)",
                   KQuantQ},
        Corruption{"kquant_in_quant_panels",
                   [](Bytes& b) { b.tensor(kQ)->mutate_layout(fb::Layout::QuantPanels); },
                   "tensor 'blk.0.attn_q.weight': q4_k tensors must be 2-D with the "
                   "KQuantPanels layout",
                   KQuantQ},
        Corruption{"kquant_columns_not_whole_super_blocks",
                   [](Bytes& b) { b.tensor(kQ)->mutable_shape()->Mutate(1, 128); },
                   "tensor 'blk.0.attn_q.weight': q4_k tensor with 128 columns (K-quants "
                   "need a multiple of 256)",
                   KQuantQ},
        Corruption{"kquant_size_disagrees",
                   [](Bytes& b) { b.tensor(kQ)->mutate_dtype(fb::DType::Q6K); },
                   "tensor 'blk.0.attn_q.weight': size 36864 bytes disagrees with its q6_k "
                   "shape, which needs 54272",
                   KQuantQ},
        Corruption{"q8_in_kquant_layout",
                   [](Bytes& b) { b.tensor(kQ)->mutate_layout(fb::Layout::KQuantPanels); },
                   "tensor 'blk.0.attn_q.weight': q8 tensors must be 2-D with the "
                   "QuantPanels layout",
                   QuantizeQ},
        Corruption{"empty_tensor_name",
                   [](Bytes& b) {
                     // The verifier wants the terminating NUL right after the length.
                     auto* name = const_cast<flatbuffers::String*>(b.tensor(kQ)->name());
                     const_cast<char*>(name->c_str())[0] = '\0';
                     SetLength(name, 0);
                   },
                   "tensor 1: empty name or a NUL inside it"},
        Corruption{"nul_in_tensor_name",
                   [](Bytes& b) {
                     auto* name = const_cast<flatbuffers::String*>(b.tensor(kQ)->name());
                     const_cast<char*>(name->c_str())[3] = '\0';
                   },
                   "empty name or a NUL inside it"},
        // Segments: misaligned, partly overlapping, past the end.
        Corruption{"offset_misaligned_by_16",
                   [](Bytes& b) { b.tensor(kQ)->mutate_offset(b.tensor(kQ)->offset() + 16); },
                   "is not a multiple of 64"},
        Corruption{"tensors_overlap_partly",
                   [](Bytes& b) {
                     // q now starts inside the last 64 bytes of the segment before it.
                     fb::Tensor* norm = b.tensor("blk.0.attn_norm.weight");
                     b.tensor(kQ)->mutate_offset(norm->offset() + norm->size() - 64);
                   },
                   "tensors 'blk.0.attn_norm.weight' and 'blk.0.attn_q.weight' overlap"},
        // The writer puts a tied classifier's segment (the token embedding) last.
        Corruption{"last_tensor_one_byte_past_end",
                   [](Bytes& b) {
                     const fb::Tensor* last = b.tensor("token_embd.weight");
                     b.Truncate(last->offset() + last->size() - 1);
                   },
                   "tensor 'token_embd.weight': offset"},
        // Tensor count and names against the config.
        Corruption{"tensor_count_short_by_one",
                   [](Bytes& b) {
                     SetLength(b.root()->tensors(), b.root()->tensors()->size() - 1);
                   },
                   "missing tensor 'token_embd.weight'"},  // the last in the directory
        Corruption{"no_tensors", [](Bytes& b) { SetLength(b.root()->tensors(), 0); },
                   "missing tensor 'token_embd.weight'"},
        Corruption{"extra_unknown_tensor", nullptr, "unexpected tensor 'blk.0.extra.weight'",
                   [](ModelSpec& s) { AddTensor(s, "blk.0.extra.weight", {4}); }},
        Corruption{"classifier_with_tied_config", nullptr,
                   "unexpected tensor 'output.weight': the config does not use it",
                   [](ModelSpec& s) { AddTensor(s, "output.weight", {300, 32}); }},
        Corruption{"duplicate_tensor_name", nullptr,
                   "two tensors are named 'blk.1.ffn_up.weight'",
                   [](ModelSpec& s) {
                     s.tensors.push_back(s.tensors[s.tensors.size() - 3]);
                   }},
        Corruption{"missing_untied_classifier",
                   [](Bytes& b) { Config(b)->mutate_tied_classifier(false); },
                   "missing tensor 'output.weight'"},
        Corruption{"missing_layer_norm_biases",
                   [](Bytes& b) { Config(b)->mutate_norm(fb::NormKind::LayerNorm); },
                   "missing tensor 'output_norm.bias'"},
        Corruption{"embedding_rows_disagree_with_vocab", nullptr,
                   "tensor 'token_embd.weight' has shape (299, 32) with 2 dims; expected "
                   "(300, 32)",
                   [](ModelSpec& s) { Reshape(s, "token_embd.weight", {299, 32}); }},
        Corruption{"matrix_shape_transposed", nullptr,
                   "tensor 'blk.0.ffn_up.weight' has shape (32, 48) with 2 dims; expected "
                   "(48, 32)",
                   [](ModelSpec& s) { Reshape(s, "blk.0.ffn_up.weight", {32, 48}); }},
        Corruption{"norm_weight_is_a_matrix", nullptr,
                   "tensor 'blk.0.attn_norm.weight' has 2 dims (32, ...); expected (32)",
                   [](ModelSpec& s) {
                     Reshape(s, "blk.0.attn_norm.weight", {32, 1});
                   }}),
    [](const ::testing::TestParamInfo<Corruption>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Tokenizer, CorruptionTest,
                         ::testing::ValuesIn(testing::TokenizerCorruptions()),
                         [](const ::testing::TestParamInfo<Corruption>& info) {
                           return info.param.name;
                         });

INSTANTIATE_TEST_SUITE_P(FamilyConfig, CorruptionTest,
                         ::testing::ValuesIn(testing::FamilyConfigCorruptions()),
                         [](const ::testing::TestParamInfo<Corruption>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace ember
