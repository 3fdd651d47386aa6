// Fuzzes the safetensors reader: header parsing, offset and size checks, lookups and
// conversion of every tensor to f32, on arbitrary bytes.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tools/convert/hf/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes, so any read past the input is an ASan report.
  std::vector<uint8_t> bytes(data, data + size);
  auto file = ember::tools::SafetensorsFile::Parse(bytes.data(), bytes.size());
  if (!file.ok()) return 0;
  std::vector<float> values;
  for (const ember::tools::SafetensorsTensor& t : (*file)->tensors()) {
    if ((*file)->Find(t.name) != &t) abort();  // names are unique and found
    if (ember::tools::SafetensorsToF32(t, &values).ok() && values.size() != t.elements) {
      abort();
    }
  }
  return 0;
}
