// Model loading of corrupted tokenizer tables: each broken field (kinds, offsets, ids,
// types, pre-tokenizer and normalizer values, the added-token table, WordPiece's fields)
// is refused with its own message. The cases model_corruption_test.cc's CorruptionTest
// runs as "Tokenizer".
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model_generated.h"
#include "runtime/model/model_test_util.h"

namespace ember::testing {
namespace {

fb::Tokenizer* Tok(Bytes& b) { return b.root()->mutable_tokenizer(); }

// Two added tokens, "<s>" (id 1) and "<t>" (id 2), sorted by text.
void WithAddedTokens(ModelSpec& spec) {
  spec.tokenizer.added = {{1, "<s>", 0}, {2, "<t>", kAddedRstrip}};
}

// The tiny model's tokenizer as WordPiece with BERT's normalizer, [CLS] ... [SEP] (ids
// 1, 2) and padding (id 0).
void AsWordPiece(ModelSpec& spec) {
  TokenizerSpec& t = spec.tokenizer;
  t.kind = TokenizerKind::kWordPiece;
  t.scores.clear();
  t.add_dummy_prefix = false;
  t.normalizer = Normalization::kBert;
  t.bert = {true, true, true, true};
  t.wordpiece_prefix = "##";
  t.append_eos = true;
  t.pad_id = 0;
}

}  // namespace

std::vector<Corruption> TokenizerCorruptions() {
  return {
      Corruption{
          "unknown_tokenizer_kind",
          [](Bytes& b) { Tok(b)->mutate_kind(static_cast<fb::TokenizerKind>(200)); },
          "tokenizer: unknown kind 200"},
      Corruption{"tokenizer_kind_without_its_tables",
                 [](Bytes& b) { Tok(b)->mutate_kind(fb::TokenizerKind::ByteLevelBpe); },
                 "byte-level BPE has no piece for byte 0x00"},
      Corruption{"first_piece_offset_not_zero",
                 [](Bytes& b) { Tok(b)->mutable_piece_offsets()->Mutate(0, 1); },
                 "first piece offset is not 0"},
      Corruption{"piece_offsets_past_piece_bytes",
                 [](Bytes& b) {
                   auto* offsets = Tok(b)->mutable_piece_offsets();
                   offsets->Mutate(300, offsets->Get(300) + 1);
                 },
                 "piece offsets end at"},
      Corruption{"piece_longer_than_max_piece_bytes",
                 [](Bytes& b) { Tok(b)->mutate_max_piece_bytes(1); },
                 "piece 0 is longer than max_piece_bytes 1"},
      Corruption{"stop_id_outside_vocabulary",
                 [](Bytes& b) { Tok(b)->mutable_stop_ids()->Mutate(0, 300); },
                 "stop id 300 outside the vocabulary of 300"},
      Corruption{"negative_stop_id",
                 [](Bytes& b) { Tok(b)->mutable_stop_ids()->Mutate(0, -1); },
                 "stop id -1 outside the vocabulary of 300"},
      Corruption{"max_piece_bytes_too_large",
                 [](Bytes& b) { Tok(b)->mutate_max_piece_bytes(100000); },
                 "max_piece_bytes 100000 exceeds 256"},
      Corruption{"types_shorter_than_vocab",
                 [](Bytes& b) { SetLength(Tok(b)->types(), 299); },
                 "299 token types for a vocabulary of 300"},
      Corruption{"scores_shorter_than_vocab",
                 [](Bytes& b) { SetLength(Tok(b)->scores(), 10); },
                 "10 scores for a vocabulary of 300"},
      Corruption{"sorted_ids_missing_one",
                 [](Bytes& b) {
                   SetLength(Tok(b)->sorted_ids(), Tok(b)->sorted_ids()->size() - 1);
                 },
                 "sorted ids for 41 searchable pieces"},
      Corruption{"eos_negative", [](Bytes& b) { Tok(b)->mutate_eos_id(-5); },
                 "special token id -5 outside the vocabulary of 300"},
      Corruption{"unk_past_vocab", [](Bytes& b) { Tok(b)->mutate_unk_id(300); },
                 "special token id 300 outside the vocabulary of 300"},
      Corruption{"byte_token_not_hex",
                 [](Bytes& b) {
                   // Token 3 is <0x00>: make it <0xG0>.
                   auto* t = Tok(b);
                   t->mutable_piece_bytes()->Mutate(t->piece_offsets()->Get(3) + 3, 'G');
                 },
                 "byte token 3 is not <0xNN>"},
      Corruption{"sorted_id_names_a_control_token",
                 [](Bytes& b) { Tok(b)->mutable_sorted_ids()->Mutate(0, 1); },
                 "sorted id 1 is out of range or not a normal piece"},
      Corruption{"unknown_pre_tokenizer",
                 [](Bytes& b) {
                   Tok(b)->mutate_pre_tokenizer(static_cast<fb::PreTokenizer>(9));
                 },
                 "unknown pre-tokenizer 9"},
      Corruption{
          "unknown_normalizer",
          [](Bytes& b) { Tok(b)->mutate_normalizer(static_cast<fb::Normalizer>(7)); },
          "normalizer 7"},
      Corruption{
          "unknown_dummy_prefix",
          [](Bytes& b) { Tok(b)->mutate_dummy_prefix(static_cast<fb::DummyPrefix>(5)); },
          "dummy prefix 5"},
      Corruption{"sentencepiece_with_a_split_pattern",
                 [](Bytes& b) { Tok(b)->mutate_pre_tokenizer(fb::PreTokenizer::Llama3); },
                 "SentencePiece BPE with the llama3 pre-tokenizer"},
      Corruption{"added_token_unknown_flags",
                 [](Bytes& b) { Tok(b)->mutable_added_flags()->Mutate(0, 9); },
                 "unknown flags", WithAddedTokens},
      Corruption{"added_token_outside_vocabulary",
                 [](Bytes& b) { Tok(b)->mutable_added_ids()->Mutate(1, 300); },
                 "(id 300) is out of range", WithAddedTokens},
      Corruption{"added_token_offsets_short",
                 [](Bytes& b) { SetLength(Tok(b)->added_offsets(), 2); },
                 "2 added tokens with 2 offsets", WithAddedTokens},
      Corruption{"added_token_not_utf8",
                 [](Bytes& b) { Tok(b)->mutable_added_text()->Mutate(0, 0xFF); },
                 "is not valid UTF-8", WithAddedTokens},
      Corruption{"added_tokens_out_of_order",
                 [](Bytes& b) { Tok(b)->mutable_added_text()->Mutate(1, 'z'); },
                 "added tokens out of order", WithAddedTokens},
      Corruption{"added_token_empty",
                 [](Bytes& b) { Tok(b)->mutable_added_offsets()->Mutate(1, 0); },
                 "added token 0 is empty", WithAddedTokens},
      Corruption{"wordpiece_without_unk", [](Bytes& b) { Tok(b)->mutate_unk_id(-1); },
                 "WordPiece without an unknown token", AsWordPiece},
      Corruption{"wordpiece_prefix_not_utf8",
                 [](Bytes& b) {
                   auto* prefix = Tok(b)->mutable_wordpiece_prefix();
                   reinterpret_cast<uint8_t*>(const_cast<char*>(prefix->c_str()))[0] = 0xFF;
                 },
                 "WordPiece prefix is not valid UTF-8", AsWordPiece},
      Corruption{"wordpiece_prefix_too_long", [](Bytes&) {},
                 "WordPiece prefix is longer than 16 bytes",
                 [](ModelSpec& spec) {
                   AsWordPiece(spec);
                   spec.tokenizer.wordpiece_prefix = std::string(17, '#');
                 }},
      Corruption{"wordpiece_max_chars_zero",
                 [](Bytes& b) { Tok(b)->mutate_max_input_chars_per_word(0); },
                 "max_input_chars_per_word 0 is not in", AsWordPiece},
      Corruption{"pad_past_vocab", [](Bytes& b) { Tok(b)->mutate_pad_id(300); },
                 "special token id 300 outside the vocabulary of 300", AsWordPiece},
      Corruption{"append_eos_without_eos", [](Bytes& b) { Tok(b)->mutate_eos_id(-1); },
                 "append_eos without an EOS token", AsWordPiece},
      Corruption{"wordpiece_with_gpt2_split",
                 [](Bytes& b) { Tok(b)->mutate_pre_tokenizer(fb::PreTokenizer::Gpt2); },
                 "WordPiece with the gpt-2 pre-tokenizer", AsWordPiece},
      Corruption{"wordpiece_with_nfc",
                 [](Bytes& b) { Tok(b)->mutate_normalizer(fb::Normalizer::Nfc); },
                 "WordPiece with NFC", AsWordPiece},
      Corruption{"bert_options_without_bert_normalizer",
                 [](Bytes& b) { Tok(b)->mutate_normalizer(fb::Normalizer::None); },
                 "BERT options without", AsWordPiece},
      Corruption{"bert_normalizer_without_wordpiece",
                 [](Bytes& b) { Tok(b)->mutate_normalizer(fb::Normalizer::Bert); },
                 "the BERT normalizer or pre-tokenizer without WordPiece"}};
}

}  // namespace ember::testing
