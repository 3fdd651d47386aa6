// NumPy .npy writer (format version 1.0, little-endian float32, C order): the tiny
// header numpy.load reads, then the raw values.
#ifndef EMBER_TOOLS_UTIL_NPY_H_
#define EMBER_TOOLS_UTIL_NPY_H_

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace ember::tools {

// The bytes of a .npy file holding `values` with `shape` (product = values.size()).
std::vector<uint8_t> NpyF32Bytes(const std::vector<float>& values,
                                 const std::vector<size_t>& shape);

// Writes them to `path`, atomically (runtime/model/atomic_file.h): a failure leaves an
// older file there as it was.
Status WriteNpyF32(const std::string& path, const std::vector<float>& values,
                   const std::vector<size_t>& shape);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_UTIL_NPY_H_
