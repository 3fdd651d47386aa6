// .npy writer (see npy.h). Layout: "\x93NUMPY", version 1.0, a little-endian uint16
// header length, the header (a Python dict literal padded with spaces and ending in
// '\n' so that the data starts at a multiple of 64 bytes), then the data.
#include "tools/util/npy.h"

#include <cstring>

#include "runtime/model/atomic_file.h"

namespace ember::tools {

std::vector<uint8_t> NpyF32Bytes(const std::vector<float>& values,
                                 const std::vector<size_t>& shape) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += (i ? ", " : "") + std::to_string(shape[i]);
  }
  if (shape.size() == 1) dims += ",";  // a Python 1-tuple
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t preamble = 10;  // magic 6 + version 2 + header length 2
  const size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - preamble - dict.size() - 1, ' ');
  dict += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.push_back(static_cast<uint8_t>(dict.size() & 0xFF));
  out.push_back(static_cast<uint8_t>(dict.size() >> 8));
  out.insert(out.end(), dict.begin(), dict.end());
  const size_t data_start = out.size();
  out.resize(data_start + values.size() * sizeof(float));
  if (!values.empty()) memcpy(out.data() + data_start, values.data(), values.size() * 4);
  return out;
}

Status WriteNpyF32(const std::string& path, const std::vector<float>& values,
                   const std::vector<size_t>& shape) {
  size_t elements = 1;
  for (size_t d : shape) elements *= d;
  if (elements != values.size()) {
    return Internal("npy: %zu values for %zu elements", values.size(), elements);
  }
  const std::vector<uint8_t> bytes = NpyF32Bytes(values, shape);
  return WriteFileAtomic(path, bytes.data(), bytes.size());
}

}  // namespace ember::tools
