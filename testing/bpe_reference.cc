// The tokenizers' quadratic references (see bpe_reference.h).
#include "testing/bpe_reference.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/text/pretokenizer.h"
#include "runtime/text/utf8.h"

namespace ember::testing {

std::vector<int32_t> ReferenceEncodeSentencePiece(const Tokenizer& tok,
                                                  const std::string& text, bool bos) {
  const TokenizerTables& t = tok.tables();
  int32_t byte_ids[256];
  std::fill(byte_ids, byte_ids + 256, -1);
  for (uint32_t id = 0; id < tok.vocab_size(); ++id) {
    const std::string_view p = tok.piece(id);
    if (tok.type(id) == TokenType::kByte) {
      byte_ids[std::stoi(std::string(p.substr(3, 2)), nullptr, 16)] = int32_t(id);
    }
  }
  std::vector<int32_t> ids;
  if (bos) ids.push_back(tok.bos_id());
  const size_t first = ids.size();
  if (!text.empty() && t.add_dummy_prefix) ids.push_back(tok.Find(" "));
  uint32_t cp;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = DecodeUtf8(text, pos, &cp);
    const int32_t id = tok.Find(std::string_view(text).substr(pos, len));
    if (id >= 0) {
      ids.push_back(id);
    } else {
      for (size_t i = 0; i < len; ++i) {
        const int32_t byte_id = byte_ids[static_cast<uint8_t>(text[pos + i])];
        if (byte_id >= 0) {
          ids.push_back(byte_id);
        } else {
          ids.push_back(t.unk_id);
          break;
        }
      }
    }
    pos += len;
  }
  while (ids.size() - first > 1) {
    float best_score = 0;
    int32_t best_id = -1;
    size_t best_idx = 0;
    for (size_t i = first; i + 1 < ids.size(); ++i) {
      const std::string joined =
          std::string(tok.piece(ids[i])) + std::string(tok.piece(ids[i + 1]));
      const int32_t id = tok.Find(joined);
      if (id >= 0 && (best_id < 0 || tok.score(id) > best_score)) {
        best_score = tok.score(id);
        best_id = id;
        best_idx = i;
      }
    }
    if (best_id < 0) break;
    ids[best_idx] = best_id;
    ids.erase(ids.begin() + best_idx + 1);
  }
  return ids;
}

std::vector<int32_t> ReferenceEncodeByteLevel(const Tokenizer& tok,
                                              const std::string& text) {
  const TokenizerTables& t = tok.tables();
  auto find_merge = [&](int32_t l, int32_t r) -> const uint32_t* {
    for (size_t lo = 0, hi = t.num_merges; lo < hi;) {
      const size_t mid = lo + (hi - lo) / 2;
      const uint32_t* m = t.merges + 4 * mid;
      if (m[0] == uint32_t(l) && m[1] == uint32_t(r)) return m;
      if (m[0] < uint32_t(l) || (m[0] == uint32_t(l) && m[1] < uint32_t(r))) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return nullptr;
  };
  const int64_t kNone = INT64_MAX;
  auto rank = [&](int32_t l, int32_t r) {
    const uint32_t* m = find_merge(l, r);
    return m ? int64_t{m[3]} : kNone;
  };
  std::vector<int32_t> out;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = Gpt2ChunkEnd(text, pos);
    std::vector<int32_t> sym;
    for (size_t i = pos; i < end; ++i) sym.push_back(tok.Find(text.substr(i, 1)));
    while (sym.size() > 1) {
      size_t best = 0;
      for (size_t i = 1; i + 1 < sym.size(); ++i) {
        if (rank(sym[i], sym[i + 1]) < rank(sym[best], sym[best + 1])) best = i;
      }
      if (rank(sym[best], sym[best + 1]) == kNone) break;
      sym[best] = int32_t(find_merge(sym[best], sym[best + 1])[2]);
      sym.erase(sym.begin() + best + 1);
    }
    out.insert(out.end(), sym.begin(), sym.end());
    pos = end;
  }
  return out;
}

std::vector<int32_t> EncodeExact(const Tokenizer& tok, const std::string& text,
                                 bool bos) {
  std::vector<int32_t> ids(tok.EncodeCapacity(text.size()) + 1, -7);
  size_t n = 0;
  const Status s = tok.Encode(text, bos, ids.data(), ids.size() - 1, &n);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(ids.back(), -7) << "wrote past the capacity";
  ids.resize(n);
  return ids;
}

}  // namespace ember::testing
