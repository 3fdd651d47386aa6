// Fuzzes the GGUF reader and importer on arbitrary bytes: a file the reader accepts has
// every metadata value read back (typed reads, strings, nested arrays, numbers) and the
// first row of every tensor of a type ember decodes decoded; a model the importer
// accepts (with its own types, then with --dtype q4 and a --keep) is serialized and
// loaded. A file with clip.projector_type is also imported as llama.cpp's projector
// (mmproj) beside a text model with both families' image tokens, and loaded.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "runtime/model/model.h"
#include "tests/fuzz/fuzz_common.h"
#include "tools/convert/gguf/gguf_blocks.h"
#include "tools/convert/gguf/gguf_builder.h"
#include "tools/convert/gguf/gguf_import.h"
#include "tools/convert/gguf/gguf_reader.h"

namespace {

using ember::tools::GgufType;
using ember::tools::GgufValue;

// Reads every element of an array (a few thousand at most per array).
void Walk(const GgufValue& v) {
  if (v.type != GgufType::kArray) return;
  if (v.element_type == GgufType::kString) {
    for (std::string_view s : ember::tools::GgufStrings(v)) {
      if (s.data() + s.size() > reinterpret_cast<const char*>(v.data + v.bytes)) abort();
    }
  } else if (v.element_type == GgufType::kArray) {
    for (const GgufValue& inner : ember::tools::GgufSubArrays(v)) Walk(inner);
  } else {
    volatile double sum = 0;
    for (uint64_t i = 0; i < v.count && i < 4096; ++i) {
      sum = sum + ember::tools::GgufNumberAt(v, i);
    }
  }
}

// Imports, serializes and loads. With the file's own types (must_load), a model the
// importer accepts must load: the importer checks what the loader checks. (A --keep
// may ask for what the loader refuses, such as an f16 norm: convert then says so.)
void ImportAndLoad(const ember::tools::GgufFile& file,
                   const ember::tools::GgufImportOptions& options, bool must_load,
                   const ember::tools::GgufFile* mmproj = nullptr) {
  ember::ModelSpec spec;
  if (!ember::tools::ImportGgufFile(file, "fuzz.gguf", options, &spec, nullptr, nullptr,
                                    mmproj)
           .ok()) {
    return;
  }
  std::vector<uint8_t> bytes;
  if (!ember::SerializeModel(spec, &bytes).ok()) return;  // e.g. a NaN to quantize
  const ember::fuzz::AlignedCopy copy(bytes.data(), bytes.size());
  auto model = ember::Model::FromMemory(copy.data(), copy.size());
  if (must_load && !model.ok()) abort();
}

// The text model a projector file is imported beside (made once).
const ember::tools::GgufFile& VisionText() {
  static const std::string bytes = [] {
    ember::ModelSpec spec;
    if (!ember::testing::VisionGgufSpec(false, &spec).ok()) abort();
    return ember::testing::TextGgufOf(spec);
  }();
  static const auto file = ember::tools::GgufFile::Parse(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (!file.ok()) abort();
  return **file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes, so any read past the input is an ASan report.
  std::vector<uint8_t> bytes(data, data + size);
  auto file = ember::tools::GgufFile::Parse(bytes.data(), bytes.size());
  if (!file.ok()) return 0;
  const ember::tools::GgufFile& f = **file;
  for (const ember::tools::GgufKv& kv : f.metadata()) {
    if (f.Find(kv.key) != &kv) abort();  // keys are unique and found
    int64_t i;
    double d;
    bool b;
    std::string_view s;
    (void)f.GetInt(kv.key, true, 0, INT64_MIN, INT64_MAX, &i);
    (void)f.GetFloat(kv.key, true, 0, &d);
    (void)f.GetBool(kv.key, true, false, &b);
    (void)f.GetString(kv.key, true, &s);
    Walk(kv.value);
  }
  std::vector<float> row;
  for (const ember::tools::GgufTensorInfo& t : f.tensors()) {
    if (f.FindTensor(t.name) != &t) abort();
    if (t.data + t.size_bytes > bytes.data() + bytes.size()) abort();
    if (!ember::tools::CanDecodeGgml(t.type)) continue;
    row.resize(t.ne[0]);
    ember::tools::DecodeGgmlRow(t.type, t.data, row.size(), row.data());
  }
  ImportAndLoad(f, {}, true);
  ember::tools::GgufImportOptions q4;
  q4.convert_dtype = true;
  q4.types.matrix = ember::DType::kQ4;
  q4.overrides = {{"blk.0.*", ember::DType::kF16}};
  ImportAndLoad(f, q4, false);
  if (f.Find("clip.projector_type")) ImportAndLoad(VisionText(), {}, true, &f);
  return 0;
}
