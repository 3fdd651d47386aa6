// Test helpers for the Hugging Face importers: write text files and safetensors files of
// f32 tensors (testing::Utf8, for byte-level pieces, is in testing/testing.h).
#ifndef EMBER_TOOLS_CONVERT_HF_HF_TEST_UTIL_H_
#define EMBER_TOOLS_CONVERT_HF_HF_TEST_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tools/util/json_util.h"

namespace ember::testing {

inline void WriteText(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  fwrite(text.data(), 1, text.size(), f);
  fclose(f);
}

// Tensors as name -> (shape, values).
using Tensors =
    std::map<std::string, std::pair<std::vector<uint64_t>, std::vector<float>>>;

// Adds `name` of `shape` with value i of the k-th tensor added equal to k * 1000 + i.
inline void AddTensor(Tensors* t, const std::string& name, std::vector<uint64_t> shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  std::vector<float> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<float>(t->size() * 1000 + i);
  (*t)[name] = {shape, v};
}

inline void WriteSafetensors(const std::string& path, const Tensors& tensors) {
  tools::Json header = tools::Json::object();
  std::string data;
  for (const auto& [name, t] : tensors) {
    const size_t begin = data.size();
    data.append(reinterpret_cast<const char*>(t.second.data()), t.second.size() * 4);
    header[name] = {
        {"dtype", "F32"}, {"shape", t.first}, {"data_offsets", {begin, data.size()}}};
  }
  const std::string text = header.dump();
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i)
    file[i] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  WriteText(path, file + text + data);
}

}  // namespace ember::testing

#endif  // EMBER_TOOLS_CONVERT_HF_HF_TEST_UTIL_H_
