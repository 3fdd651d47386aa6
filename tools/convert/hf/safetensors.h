// Safetensors reader: the Hugging Face weight format (8-byte little-endian header size,
// a JSON header naming each tensor's dtype, shape and byte range, then the raw data).
// Every offset and size in the header is checked against the file before use, so a
// corrupt or hostile file gets an error, never an out-of-bounds read.
#ifndef EMBER_TOOLS_CONVERT_HF_SAFETENSORS_H_
#define EMBER_TOOLS_CONVERT_HF_SAFETENSORS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/half.h"
#include "runtime/status.h"
#include "tools/util/files.h"

namespace ember::tools {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;            // as the file spells it: "F32", "F16", "BF16", "I64", ...
  size_t element_bytes = 0;     // of dtype
  std::vector<uint64_t> shape;  // row-major, slowest first (() is a scalar)
  uint64_t elements = 0;
  const uint8_t* data = nullptr;  // inside the file; not aligned
  uint64_t size_bytes = 0;
};

class SafetensorsFile {
 public:
  // Parses a file held in memory; `data` must outlive the result.
  static Result<std::unique_ptr<SafetensorsFile>> Parse(const uint8_t* data, size_t size);
  // Maps `path` read-only and parses it.
  static Result<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  // The tensor named `name`, or null.
  const SafetensorsTensor* Find(const std::string& name) const;

 private:
  SafetensorsFile() = default;
  Status ParseHeader(const uint8_t* data, size_t size);

  MappedFile mapping_;
  std::vector<SafetensorsTensor> tensors_;  // sorted by name
};

// Converts a tensor's values to f32. F32, F16, BF16 and F64 are supported; other dtypes
// get an error naming the tensor.
Status SafetensorsToF32(const SafetensorsTensor& tensor, std::vector<float>* out);

// IEEE half and bfloat16 bit patterns to float (exact): kernels/half.h.
using kernels::BFloat16ToFloat;
using kernels::HalfToFloat;

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_HF_SAFETENSORS_H_
