// SHA-256 (FIPS 180-4), streamed: what `ember bench --history` records to name a model
// file by its content.
#ifndef EMBER_TOOLS_UTIL_SHA256_H_
#define EMBER_TOOLS_UTIL_SHA256_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace ember::tools {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  // The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string HexDigest();

 private:
  void Block(const uint8_t* block);  // one 64-byte block into state_

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// The hex digest of `size` bytes (e.g. a mapped model file).
std::string Sha256Hex(const void* data, size_t size);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_UTIL_SHA256_H_
