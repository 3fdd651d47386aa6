// Tokenizer benchmark: encodes 1 MiB prompts (story text, one letter, spaces, random
// letters; for the Hugging Face tokenizers also a chat with special tokens, text NFC
// changes, and a run of combining marks) with stories260K's and Llama 2's SentencePiece
// vocabularies, GPT-2's byte-level one and the tokenizer.json of Llama 3, Qwen3 and
// Gemma 3, and, for comparison, 32 KiB with the quadratic merge loops the tokenizer had
// before (copied here; about three minutes in all). Prints the median of several runs in
// ms. Not run by ctest:
//   build/tools/bench/tokenize_bench [--no-old] [models_dir]
// (models_dir: default $EMBER_MODELS, else ../shared/models).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "runtime/model/loaded_tokenizer.h"
#include "runtime/model/model_writer.h"
#include "runtime/text/pretokenizer.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/utf8.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/convert/llama2c/llama2c_import.h"
#include "tools/util/files.h"

namespace ember {
namespace {

// The SentencePiece encoder before the heap: llama2.c's loop, a scan of every pair and a
// memmove per merge (O(n^2)).
size_t OldEncodeSentencePiece(const Tokenizer& tok, std::string_view text, int32_t* ids) {
  int32_t byte_ids[256];
  std::fill(byte_ids, byte_ids + 256, -1);
  for (uint32_t id = 0; id < tok.vocab_size(); ++id) {
    if (tok.type(id) == TokenType::kByte) {
      byte_ids[strtol(std::string(tok.piece(id).substr(3, 2)).c_str(), nullptr, 16)] =
          static_cast<int32_t>(id);
    }
  }
  size_t count = 0;
  if (!text.empty() && tok.tables().add_dummy_prefix) ids[count++] = tok.Find(" ");
  uint32_t cp;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = DecodeUtf8(text, pos, &cp);
    const int32_t id = tok.Find(text.substr(pos, len));
    if (id >= 0) {
      ids[count++] = id;
    } else {
      for (size_t i = 0; i < len; ++i) ids[count++] = byte_ids[uint8_t(text[pos + i])];
    }
    pos += len;
  }
  char buf[512];
  const size_t max_piece_bytes = tok.tables().max_piece_bytes;
  while (count > 1) {
    float best_score = 0;
    int32_t best_id = -1;
    size_t best_idx = 0;
    for (size_t i = 0; i + 1 < count; ++i) {
      const std::string_view a = tok.piece(ids[i]), b = tok.piece(ids[i + 1]);
      if (a.size() + b.size() > max_piece_bytes) continue;
      memcpy(buf, a.data(), a.size());
      memcpy(buf + a.size(), b.data(), b.size());
      const int32_t id = tok.Find(std::string_view(buf, a.size() + b.size()));
      if (id >= 0 && (best_id < 0 || tok.score(id) > best_score)) {
        best_score = tok.score(id);
        best_id = id;
        best_idx = i;
      }
    }
    if (best_id < 0) break;
    ids[best_idx] = best_id;
    memmove(ids + best_idx + 1, ids + best_idx + 2,
            (count - best_idx - 2) * sizeof(int32_t));
    --count;
  }
  return count;
}

// The byte-level encoder before the heap: per chunk, a scan for the lowest rank and a
// compacting pass per merged pair (O(m^2) per chunk).
size_t OldEncodeByteLevel(const Tokenizer& tok, std::string_view text, int32_t* ids) {
  const TokenizerTables& t = tok.tables();
  constexpr int32_t kNoMerge = INT32_MAX, kLookUp = -1;
  auto find_merge = [&](int32_t left, int32_t right) -> const uint32_t* {
    const uint32_t l = uint32_t(left), r = uint32_t(right);
    for (size_t lo = 0, hi = t.num_merges; lo < hi;) {
      const size_t mid = lo + (hi - lo) / 2;
      const uint32_t* m = t.merges + 4 * mid;
      if (m[0] < l || (m[0] == l && m[1] < r)) {
        lo = mid + 1;
      } else if (m[0] == l && m[1] == r) {
        return m;
      } else {
        hi = mid;
      }
    }
    return nullptr;
  };
  auto merge_rank = [&](int32_t l, int32_t r) {
    const uint32_t* m = find_merge(l, r);
    return m ? int32_t(m[3]) : kNoMerge;
  };
  int32_t byte_ids[256];
  for (int b = 0; b < 256; ++b) byte_ids[b] = tok.Find(std::string(1, char(b)));
  size_t count = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = Gpt2ChunkEnd(text, pos);
    size_t m = end - pos;
    int32_t* sym = ids + count;
    int32_t* rank = sym + m;
    for (size_t i = 0; i < m; ++i) sym[i] = byte_ids[uint8_t(text[pos + i])];
    for (size_t i = 0; i + 1 < m; ++i) rank[i] = merge_rank(sym[i], sym[i + 1]);
    rank[m - 1] = kNoMerge;
    while (m > 1) {
      size_t best = 0;
      for (size_t i = 1; i + 1 < m; ++i) best = rank[i] < rank[best] ? i : best;
      const int32_t r = rank[best];
      if (r == kNoMerge) break;
      const int32_t left = sym[best], right = sym[best + 1];
      const int32_t result = int32_t(find_merge(left, right)[2]);
      size_t w = best;
      for (size_t j = best; j < m; ++w) {
        if (j + 1 < m && rank[j] == r && sym[j] == left && sym[j + 1] == right) {
          sym[w] = result;
          if (w > 0) rank[w - 1] = kLookUp;
          rank[w] = kLookUp;
          j += 2;
        } else {
          sym[w] = sym[j];
          rank[w] = rank[j];
          j += 1;
        }
      }
      m = w;
      rank[m - 1] = kNoMerge;
      for (size_t i = best > 0 ? best - 1 : 0; i + 1 < m; ++i) {
        if (rank[i] == kLookUp) rank[i] = merge_rank(sym[i], sym[i + 1]);
      }
    }
    count += m;
    pos = end;
  }
  return count;
}

// Wall time and this thread's CPU time (which other processes on a busy machine do not
// inflate), in ms.
struct Clock {
  double wall_ms, cpu_ms;
};
Clock Now() {
  timespec cpu;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  return {std::chrono::duration<double, std::milli>(
              std::chrono::steady_clock::now().time_since_epoch())
              .count(),
          cpu.tv_sec * 1e3 + cpu.tv_nsec * 1e-6};
}

// Medians over `runs` calls of f(ids) (f returns the token count).
template <class F>
Clock Median(int runs, std::vector<int32_t>* ids, size_t* tokens, F f) {
  std::vector<double> wall, cpu;
  for (int i = 0; i < runs; ++i) {
    const Clock start = Now();
    *tokens = f(ids->data());
    const Clock end = Now();
    wall.push_back(end.wall_ms - start.wall_ms);
    cpu.push_back(end.cpu_ms - start.cpu_ms);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[runs / 2], cpu[runs / 2]};
}

// Copies of `unit` up to `bytes`, cut at a character boundary.
std::string Repeat(const std::string& unit, size_t bytes) {
  std::string text;
  while (text.size() < bytes) text += unit;
  size_t n = bytes;
  while (n > 0 && (static_cast<uint8_t>(text[n]) & 0xC0) == 0x80) --n;
  text.resize(n);
  return text;
}

int Run(const std::string& dir, bool old) {
  const auto dir_of = [&](const char* name) { return dir + "/hf-tokenizers/" + name; };
  struct Vocab {
    const char* name;
    TokenizerSpec spec;
    bool hf = false;  // a tokenizer.json: more texts, special tokens parsed, no old loop
  };
  std::vector<Vocab> vocabs;
  struct Llama2cFile {
    const char* name;
    const char* file;
    uint32_t vocab_size;
  };
  for (const Llama2cFile& f :
       {Llama2cFile{"stories260K SentencePiece (512)", "/llama2c/stories260K/tok512.bin",
                    512},
        Llama2cFile{"Llama 2 SentencePiece (32000)", "/llama2c/tokenizer.bin", 32000}}) {
    std::vector<uint8_t> bytes;
    Vocab v{f.name, {}};
    Status s = tools::ReadFile(dir + f.file, &bytes);
    if (s.ok()) s = tools::ParseLlama2cTokenizer(bytes, f.vocab_size, &v.spec);
    if (!s.ok()) {
      fprintf(stderr, "%s: %s\n", f.file, s.message());
      return 1;
    }
    v.spec.bos_id = 1;
    vocabs.push_back(std::move(v));
  }
  {
    tools::SpecialTokens specials;
    specials.bos_id = specials.eos_id = 50256;
    Vocab v{"GPT-2 byte-level (50257)", {}};
    const Status s = tools::ReadVocabAndMerges(
        dir + "/gpt2-bpe/encoder.json", dir + "/gpt2-bpe/vocab.bpe", specials, &v.spec);
    if (!s.ok()) {
      fprintf(stderr, "gpt2-bpe: %s\n", s.message());
      return 1;
    }
    vocabs.push_back(std::move(v));
  }
  for (const auto& [name, dir] :
       {std::pair<const char*, const char*>{"Llama 3 byte-level (128256)", "llama3"},
        {"Qwen3 byte-level, NFC (151669)", "qwen3"},
        {"Gemma 3 SentencePiece (262145)", "gemma3"}}) {
    Vocab v{name, {}, true};
    const Status s =
        tools::ReadHfTokenizer(dir_of(dir), 0, tools::SpecialTokens(), &v.spec);
    if (!s.ok()) {
      fprintf(stderr, "%s: %s\n", dir, s.message());
      return 1;
    }
    vocabs.push_back(std::move(v));
  }

  const std::string story =
      "Once upon a time, there was a little girl named Lily. She loved to play outside "
      "in the sunshine. One day, she saw a big, red ball in the park.\n";
  // 64 KiB of random lowercase letters (repeated to 1 MiB): one pre-tokenized chunk of
  // many different pairs, the worst case of the old byte-level loop.
  std::string letters;
  for (uint32_t x = 1; letters.size() < (64 << 10);) {
    x = x * 1664525u + 1013904223u;  // a linear congruential generator
    letters.push_back(static_cast<char>('a' + (x >> 16) % 26));
  }
  const size_t kNewBytes = size_t{1} << 20, kOldBytes = 32 << 10;
  const int kRuns = 5;
  printf(
      "median of %d runs (1 for the old SentencePiece loop); cpu: this thread's time\n",
      kRuns);
  printf("%-34s %-7s %8s %8s %5s %10s %10s\n", "vocabulary", "text", "bytes", "tokens",
         "merge", "wall ms", "cpu ms");
  // Chat turns with special tokens, accented text in decomposed form (NFC composes it),
  // and combining marks alternating between two classes (NFC sorts one long run).
  const std::string chat =
      "<|im_start|>user\nWhat's 12345 + 678?<|im_end|>\n<start_of_turn>model\n"
      "\xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD<end_of_turn>\n";
  const std::string decomposed = "cafe\xCC\x81 na\xCC\x88ive A\xCC\x8A ";
  std::string marks = "a";
  while (marks.size() < kNewBytes - 4) marks += "\xCC\x81\xCC\xA3";
  for (const Vocab& v : vocabs) {
    LoadedTokenizer loaded;
    const Status s = LoadTokenizerSpec(v.spec, v.name, &loaded);
    if (!s.ok()) {
      fprintf(stderr, "%s: %s\n", v.name, s.message());
      return 1;
    }
    const Tokenizer& tok = loaded.tokenizer;
    std::vector<std::pair<const char*, std::string>> units = {
        {"story", story}, {"'a'", "a"}, {"spaces", " "}, {"letters", letters}};
    if (v.hf) {
      units.insert(units.end(), {{"chat", chat}, {"nfd", decomposed}, {"marks", marks}});
    }
    EncodeOptions options;
    options.add_bos = tok.bos_id() >= 0;
    options.parse_special = v.hf;
    for (const auto& [label, unit] : units) {
      const std::string text = Repeat(unit, kNewBytes);
      std::vector<int32_t> ids(tok.EncodeCapacity(text.size()));
      size_t tokens = 0;
      const Clock t = Median(kRuns, &ids, &tokens, [&](int32_t* out) {
        size_t n = 0;
        const Status e = tok.Encode(text, options, out, ids.size(), &n);
        if (!e.ok()) fprintf(stderr, "%s\n", e.message());
        return n;
      });
      printf("%-34s %-7s %8zu %8zu %5s %10.1f %10.1f\n", v.name, label, text.size(),
             tokens, "heap", t.wall_ms, t.cpu_ms);
      if (label == std::string("marks")) continue;  // one size is enough
      const std::string small = Repeat(unit, kOldBytes);
      std::vector<int32_t> new_ids(tok.EncodeCapacity(small.size()));
      size_t new_tokens = 0;
      const Clock new_t = Median(kRuns, &new_ids, &new_tokens, [&](int32_t* out) {
        size_t n = 0;
        EncodeOptions no_bos = options;
        no_bos.add_bos = false;  // as the old loops
        (void)tok.Encode(small, no_bos, out, new_ids.size(), &n);
        return n;
      });
      printf("%-34s %-7s %8zu %8zu %5s %10.2f %10.2f\n", v.name, label, small.size(),
             new_tokens, "heap", new_t.wall_ms, new_t.cpu_ms);
      if (!old || v.hf) continue;  // the old loops had neither sections nor NFC
      std::vector<int32_t> old_ids(2 * small.size() + 2);
      const bool spm = tok.kind() == TokenizerKind::kSentencePieceBpe;
      const Clock old_t = Median(spm ? 1 : kRuns, &old_ids, &tokens, [&](int32_t* out) {
        return spm ? OldEncodeSentencePiece(tok, small, out)
                   : OldEncodeByteLevel(tok, small, out);
      });
      const bool same =
          tokens == new_tokens &&
          std::equal(old_ids.begin(), old_ids.begin() + tokens, new_ids.begin());
      printf("%-34s %-7s %8zu %8zu %5s %10.2f %10.2f%s\n", v.name, label, small.size(),
             tokens, "old", old_t.wall_ms, old_t.cpu_ms, same ? "" : "  (ids differ!)");
      fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace ember

int main(int argc, char** argv) {
  const bool old = !(argc > 1 && std::string(argv[1]) == "--no-old");
  const int dir_arg = old ? 1 : 2;
  const char* env = getenv("EMBER_MODELS");
  const std::string dir = argc > dir_arg ? argv[dir_arg]
                          : env && *env  ? env
                                         : EMBER_MODELS_DIR;
  return ember::Run(dir, old);
}
