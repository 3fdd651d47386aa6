// Fuzzes the Hugging Face directory importer: the input holds config.json,
// model.safetensors, tokenizer.json, vocab.json, merges.txt and tokenizer_config.json in
// that order (split at kPartSeparator; an empty part is a missing file). They are written
// to a private temporary directory and imported; what the importer accepts is written as
// a .ember file and loaded.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/model/model.h"
#include "tests/fuzz/fuzz_common.h"
#include "tools/convert/hf/hf_import.h"

namespace {

const std::string& Directory() {
  static const std::string* dir = [] {
    const char* tmp = getenv("TMPDIR");
    std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/ember_hf_fuzz_XXXXXX";
    if (!mkdtemp(path.data())) {
      perror("hf_fuzzer: mkdtemp");
      abort();
    }
    auto* p = new std::string(path);
    atexit([] {
      for (const char* f : ember::fuzz::kHfFiles) unlink((Directory() + "/" + f).c_str());
      rmdir(Directory().c_str());
    });
    return p;
  }();
  return *dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = ember::fuzz::SplitParts(data, size, ember::fuzz::kNumHfFiles);
  for (size_t i = 0; i < ember::fuzz::kNumHfFiles; ++i) {
    const std::string path = Directory() + "/" + ember::fuzz::kHfFiles[i];
    if (parts[i].empty()) {
      unlink(path.c_str());
      continue;
    }
    FILE* f = fopen(path.c_str(), "wb");
    if (!f || fwrite(parts[i].data(), 1, parts[i].size(), f) != parts[i].size() ||
        fclose(f) != 0) {
      perror("hf_fuzzer: writing the directory");
      abort();
    }
  }
  ember::ModelSpec spec;
  if (!ember::tools::ImportHf(Directory(), &spec).ok()) return 0;
  if (!ember::tools::CheckSpecTensors(spec).ok()) return 0;
  std::vector<uint8_t> bytes;
  if (!ember::SerializeModel(spec, &bytes).ok()) return 0;
  const ember::fuzz::AlignedCopy copy(bytes.data(), bytes.size());
  auto model = ember::Model::FromMemory(copy.data(), copy.size());
  (void)model;
  return 0;
}
