// GgufFile: a verified, zero-copy view of a GGUF file (llama.cpp's model format, versions
// 2 and 3): its metadata (every value type, arrays nested to kMaxArrayDepth) and its
// tensor directory. Every count, length, size and offset is bounds- and overflow-checked
// (in 64 bits, so 32-bit hosts check the same) before anything is read or allocated: a
// corrupt or hostile file gets a message saying what is wrong, never a crash, and the
// reader holds a few dozen bytes per metadata entry and tensor, so no file makes it
// allocate much more than the file's own size.
//
// Layout (little-endian): "GGUF", uint32 version, uint64 tensor_count, uint64 kv_count,
// kv_count x (string key, uint32 type, value), tensor_count x (string name, uint32
// n_dims, uint64 ne[n_dims], uint32 ggml_type, uint64 offset), padding to
// general.alignment (default 32), then the data section; each tensor's offset counts from
// its start. A string is uint64 length + bytes (no NUL); an array is uint32 element type,
// uint64 count, elements. ne[0] is the fastest-varying dimension: a matrix of `rows` rows
// of `cols` inputs is ne = (cols, rows), PyTorch's (rows, cols).
#ifndef EMBER_TOOLS_CONVERT_GGUF_GGUF_READER_H_
#define EMBER_TOOLS_CONVERT_GGUF_GGUF_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/status.h"
#include "tools/util/files.h"

namespace ember::tools {

// Metadata value types (GGUF's gguf_type).
enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
const char* GgufTypeName(GgufType type);

// Tensor element types (GGML's ggml_type) this reader knows the block size of; others
// (and the removed ones) are refused when the file is parsed.
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
};

// A GGML type's name as llama.cpp prints it ("q4_K") and its block: `block_elements`
// consecutive elements of a row take `block_bytes` bytes.
struct GgmlTypeInfo {
  const char* name;
  uint32_t block_elements;
  uint32_t block_bytes;
};
// Null for a type number this reader does not know.
const GgmlTypeInfo* FindGgmlType(uint32_t type);
// "q4_K", or "type 99" for one it does not know.
std::string GgmlTypeName(uint32_t type);

// One metadata value, pointing into the file. A scalar's bytes are at `data`; a string
// is `count` bytes at `data`; an array holds `count` elements of `element_type` from
// `data` on (strings and nested arrays are variable-sized: GgufStrings, GgufSubArrays).
struct GgufValue {
  GgufType type = GgufType::kUint8;
  GgufType element_type = GgufType::kUint8;  // arrays only
  uint64_t count = 1;
  const uint8_t* data = nullptr;
  uint64_t bytes = 0;  // the value's size in the file (for an array, of its elements)
};

struct GgufKv {
  std::string_view key;
  GgufValue value;
};

struct GgufTensorInfo {
  std::string_view name;
  uint32_t n_dims = 0;
  uint64_t ne[4] = {1, 1, 1, 1};  // ne[0]: the fastest-varying dimension
  uint32_t type = 0;              // a GgmlType known to FindGgmlType
  uint64_t offset = 0;            // from the data section's start
  uint64_t elements = 0;
  uint64_t size_bytes = 0;
  const uint8_t* data = nullptr;  // inside the file; aligned as general.alignment says
};

class GgufFile {
 public:
  static constexpr uint32_t kDefaultAlignment = 32;
  static constexpr int kMaxArrayDepth = 8;     // arrays inside arrays inside ...
  static constexpr size_t kMaxNameBytes = 63;  // GGML_MAX_NAME - 1: a tensor's name

  // Parses a file held in memory; `data` must outlive the result.
  static Result<std::unique_ptr<GgufFile>> Parse(const uint8_t* data, size_t size);
  // Maps `path` read-only and parses it (messages start with the path).
  static Result<std::unique_ptr<GgufFile>> Open(const std::string& path);
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // the data section's start
  const std::vector<GgufKv>& metadata() const { return kvs_; }             // file order
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }  // file order
  const GgufKv* Find(std::string_view key) const;
  const GgufTensorInfo* FindTensor(std::string_view name) const;
  // Bytes the reader holds on the heap (its directory): a test bounds it by the file's.
  size_t HeapBytes() const;

  // Typed reads of one key with messages that name it. A missing key gives `fallback`
  // unless `required`. Integers accept every integer type whose value fits [min, max];
  // floats accept float32 and float64.
  Status GetInt(std::string_view key, bool required, int64_t fallback, int64_t min,
                int64_t max, int64_t* out) const;
  Status GetFloat(std::string_view key, bool required, double fallback,
                  double* out) const;
  Status GetBool(std::string_view key, bool required, bool fallback, bool* out) const;
  Status GetString(std::string_view key, bool required, std::string_view* out) const;
  // An array of `element_type` (null when absent and not required).
  Status GetArray(std::string_view key, GgufType element_type, bool required,
                  const GgufValue** out) const;

 private:
  GgufFile() = default;
  Status ParseAll(const uint8_t* data, size_t size);

  MappedFile mapping_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<GgufKv> kvs_;
  std::vector<GgufTensorInfo> tensors_;
  std::vector<uint32_t> kv_order_;      // indices of kvs_ sorted by key
  std::vector<uint32_t> tensor_order_;  // indices of tensors_ sorted by name
};

// The strings of an array of strings, in order (views into the file).
std::vector<std::string_view> GgufStrings(const GgufValue& array);
// The arrays of an array of arrays, in order.
std::vector<GgufValue> GgufSubArrays(const GgufValue& array);
// Element i of an array of fixed-size numbers, widened (the parser checked the bounds).
double GgufNumberAt(const GgufValue& array, uint64_t i);
// The bytes a value of a fixed-size type takes (0 for strings and arrays).
size_t GgufScalarBytes(GgufType type);

// A key or name from the file, quoted and clipped for a message.
std::string GgufQuote(std::string_view text);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_GGUF_GGUF_READER_H_
