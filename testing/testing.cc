// Shared test helpers (see testing.h).
#include "testing/testing.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

#include "gtest/gtest.h"
#include "runtime/generate.h"
#include "runtime/model/model.h"
#include "runtime/model/tensor_names.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/text/utf8.h"

namespace ember::testing {
namespace {

bool CollectToken(void* user, int32_t id, std::string_view text) {
  auto* out = static_cast<Generated*>(user);
  out->ids.push_back(id);
  out->text.append(text);
  return true;
}

}  // namespace

Generated GenerateGreedy(const Model& model, const ThreadPool* pool, size_t n,
                         const SessionOptions& options) {
  Generated out;
  auto session = Session::Create(model, options, pool);
  EXPECT_TRUE(session.ok()) << session.status().message();
  if (!session.ok()) return out;
  SamplerOptions greedy;
  greedy.temperature = 0.0f;
  Sampler sampler(greedy, model.config().vocab_size, session->sampler_scratch());
  const int32_t bos = model.tokenizer().bos_id();
  GenerateResult result;
  Status s = Generate(*session, sampler, &bos, 1, n, &CollectToken, &out, &result);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

std::string ModelsDir() {
  const char* env = getenv("EMBER_MODELS");
  return env && *env ? env : EMBER_DEFAULT_MODELS_DIR;
}

bool HaveModel(const std::string& relative) {
  const std::string path = ModelsDir() + "/" + relative;
  if (access(path.c_str(), R_OK) == 0) return true;
  const char* require = getenv("EMBER_REQUIRE_MODELS");
  const std::string message = "test model " + path +
                              " not found: set EMBER_MODELS to the directory holding "
                              "shared/models (see README)";
  if (require && std::string(require) == "1") {
    ADD_FAILURE() << message;
  } else {
    [&] { GTEST_SKIP_(message.c_str()); }();  // marks the test skipped
  }
  return false;
}

const std::vector<int32_t>& Stories260KGolden() {
  // karpathy/llama2.c doc/stories260K.md: run.c, temperature 0, 256 steps, empty prompt.
  static const std::vector<int32_t> ids = {
      403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338,
      401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385,
      328, 432, 358, 394, 261, 370, 432, 352, 266, 268, 388, 426, 338, 391, 266, 267,
      337, 335, 312, 432, 398, 312, 286, 267, 414, 270, 333, 415, 426, 13,  438, 310,
      439, 419, 357, 336, 432, 313, 438, 310, 432, 278, 316, 439, 419, 298, 414, 267,
      265, 282, 295, 433, 426, 436, 317, 286, 296, 418, 269, 279, 292, 416, 439, 413,
      409, 416, 327, 263, 415, 294, 267, 400, 426, 338, 336, 432, 313, 442, 391, 267,
      337, 335, 364, 420, 268, 388, 432, 398, 359, 280, 303, 439, 413, 272, 417, 264,
      312, 426, 436, 13,  438, 310, 286, 296, 418, 269, 279, 292, 416, 439, 413, 409,
      416, 327, 263, 415, 294, 267, 400, 426, 338, 336, 432, 313, 442, 439, 423, 262,
      304, 420, 422, 432, 317, 426, 359, 279, 292, 416, 439, 413, 409, 416, 327, 263,
      415, 294, 267, 400, 426, 436, 13,  438, 310, 279, 292, 416, 439, 413, 391, 267,
      281, 421, 427, 311, 357, 432, 384, 358, 336, 432, 313, 442, 439, 423, 262, 304,
      420, 422, 432, 357, 426, 359, 279, 292, 416, 439, 413, 409, 416, 327, 263, 415,
      294, 267, 400, 426, 436, 320, 285, 357, 336, 432, 313, 455, 289, 439, 413, 263,
      304, 420, 422, 432, 317, 426, 410, 448, 411, 280, 303, 281, 421, 427, 364, 426};
  return ids;
}

std::string RandomText(const Tokenizer& tok, size_t bytes, std::mt19937* rng) {
  static const char* const kChars[] = {"\xc3\xa9",
                                       "\xe2\x82\xac",
                                       "\xf0\x9f\x98\x80",
                                       "\xe4\xb8\xad",
                                       "\xe3\x80\x80",
                                       "\t",
                                       "\n",
                                       ",",
                                       "'s",
                                       "'ll",
                                       "'",
                                       "7",
                                       "42",
                                       "3.14",
                                       "!!",
                                       "\x01"};
  auto pick = [&](size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(*rng);
  };
  std::string text;
  while (text.size() < bytes) {
    switch (pick(6)) {
      case 0:
      case 1: {  // a piece (whole pieces make long merges)
        const uint32_t id = static_cast<uint32_t>(pick(tok.vocab_size()));
        size_t bad;
        if (tok.type(id) == TokenType::kNormal && ValidUtf8(tok.piece(id), &bad)) {
          text.append(tok.piece(id));
        }
        break;
      }
      case 2:
        text.append(1 + pick(3), ' ');
        break;
      case 3:
        text.append(kChars[pick(sizeof(kChars) / sizeof(kChars[0]))]);
        break;
      case 4:
        text.append(1 + pick(pick(8) == 0 ? 400 : 12), "aeo tx"[pick(6)]);
        break;
      default:
        for (size_t i = 1 + pick(pick(8) == 0 ? 300 : 6); i > 0; --i) {
          text.push_back(" \n\t"[pick(3)]);
        }
    }
  }
  return text;
}

ScratchDir::ScratchDir(const char* prefix) {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern << ": " << strerror(errno);
  } else {
    path_ = pattern;
  }
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  for (const std::string& name : Entries()) unlink((path_ + "/" + name).c_str());
  rmdir(path_.c_str());
}

std::vector<std::string> ScratchDir::Entries() const {
  std::vector<std::string> names;
  DIR* d = path_.empty() ? nullptr : opendir(path_.c_str());
  if (!d) return names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string Utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

std::vector<VocabCase> ReadVocabCases(const std::string& base) {
  std::vector<uint8_t> bytes;
  ReadFileBytes(base + ".inp", &bytes);
  const std::string inp(bytes.begin(), bytes.end());
  ReadFileBytes(base + ".out", &bytes);
  const std::string out(bytes.begin(), bytes.end());

  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<VocabCase> cases;
  for (size_t pos = 0; pos <= inp.size();) {
    size_t end = inp.find(separator, pos);
    if (end == std::string::npos) end = inp.size();
    cases.push_back({inp.substr(pos, end - pos), {}});
    pos = end + separator.size();
  }
  std::istringstream lines(out);
  std::string line;
  size_t i = 0;
  while (std::getline(lines, line) && i < cases.size()) {
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) cases[i].ids.push_back(id);
    ++i;
  }
  // The text after the last separator is empty, and so is its (missing) last line.
  EXPECT_EQ(cases.size(), 47u) << base;
  return cases;
}

std::string JoinIds(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

bool ReadFileBytes(const std::string& path, std::vector<uint8_t>* bytes) {
  std::ifstream in(path, std::ios::binary);
  bytes->assign(std::istreambuf_iterator<char>(in), {});
  if (!in.is_open()) ADD_FAILURE() << "cannot open " << path;
  return in.is_open();
}

}  // namespace ember::testing
