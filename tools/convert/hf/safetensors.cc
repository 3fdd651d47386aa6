// Safetensors reader (see safetensors.h). The JSON header is parsed without exceptions
// and every field is type-checked before it is read.
#include "tools/convert/hf/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "nlohmann/json.hpp"

namespace ember::tools {
namespace {

using json = nlohmann::json;

// safetensors' own limit on the header (its MAX_HEADER_SIZE).
constexpr uint64_t kMaxHeaderBytes = 100000000;
constexpr size_t kMaxDims = 8;

size_t DTypeBytes(const std::string& dtype) {
  static const struct {
    const char* name;
    size_t bytes;
  } kTypes[] = {{"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
                {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
                {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};
  for (const auto& t : kTypes) {
    if (dtype == t.name) return t.bytes;
  }
  return 0;
}

// Reads a non-negative JSON integer.
bool GetUint(const json& value, uint64_t* out) {
  if (!value.is_number_unsigned()) return false;
  *out = value.get<uint64_t>();
  return true;
}

// Checks and records one header entry. `name` is shown in messages (quoted, clipped).
Status ParseEntry(const std::string& name, const json& entry, const uint8_t* data_start,
                  uint64_t data_bytes, SafetensorsTensor* t) {
  const char* n = name.c_str();
  if (!entry.is_object())
    return InvalidArgument("safetensors: '%.80s' is not an object", n);
  const auto dtype = entry.find("dtype");
  const auto shape = entry.find("shape");
  const auto offsets = entry.find("data_offsets");
  if (dtype == entry.end() || !dtype->is_string()) {
    return InvalidArgument("safetensors: tensor '%.80s' has no dtype string", n);
  }
  if (shape == entry.end() || !shape->is_array() || shape->size() > kMaxDims) {
    return InvalidArgument(
        "safetensors: tensor '%.80s' has no shape (an array of up to "
        "%zu sizes)",
        n, kMaxDims);
  }
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2) {
    return InvalidArgument("safetensors: tensor '%.80s' has no data_offsets [begin, end]",
                           n);
  }
  t->name = name;
  t->dtype = dtype->get<std::string>();
  t->element_bytes = DTypeBytes(t->dtype);
  if (t->element_bytes == 0) {
    return InvalidArgument("safetensors: tensor '%.80s' has unknown dtype '%.16s'", n,
                           t->dtype.c_str());
  }
  t->elements = 1;
  for (const json& dim : *shape) {
    uint64_t d = 0;
    if (!GetUint(dim, &d)) {
      return InvalidArgument(
          "safetensors: tensor '%.80s' has a shape entry that is not "
          "a non-negative integer",
          n);
    }
    t->shape.push_back(d);
    if (__builtin_mul_overflow(t->elements, d, &t->elements)) {
      return InvalidArgument("safetensors: tensor '%.80s' has too many elements", n);
    }
  }
  uint64_t begin = 0, end = 0, bytes = 0;
  if (!GetUint((*offsets)[0], &begin) || !GetUint((*offsets)[1], &end)) {
    return InvalidArgument(
        "safetensors: tensor '%.80s' has data_offsets that are not "
        "non-negative integers",
        n);
  }
  if (__builtin_mul_overflow(t->elements, uint64_t{t->element_bytes}, &bytes)) {
    return InvalidArgument("safetensors: tensor '%.80s' is too large", n);
  }
  if (begin > end || end > data_bytes) {
    return InvalidArgument(
        "safetensors: tensor '%.80s' has data_offsets [%llu, %llu] "
        "outside the %llu data bytes",
        n, static_cast<unsigned long long>(begin), static_cast<unsigned long long>(end),
        static_cast<unsigned long long>(data_bytes));
  }
  if (end - begin != bytes) {
    return InvalidArgument(
        "safetensors: tensor '%.80s' holds %llu bytes but its %s shape "
        "needs %llu",
        n, static_cast<unsigned long long>(end - begin), t->dtype.c_str(),
        static_cast<unsigned long long>(bytes));
  }
  t->data = data_start + begin;
  t->size_bytes = bytes;
  return Status::Ok();
}

}  // namespace

Status SafetensorsFile::ParseHeader(const uint8_t* data, size_t size) {
  if (size < 8) {
    return InvalidArgument("safetensors: %zu bytes is too short for the header size",
                           size);
  }
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | data[i];
  if (header_bytes > kMaxHeaderBytes || header_bytes > size - 8) {
    return InvalidArgument(
        "safetensors: header size %llu does not fit the %zu-byte file "
        "(not a safetensors file?)",
        static_cast<unsigned long long>(header_bytes), size);
  }
  const char* header = reinterpret_cast<const char*>(data + 8);
  const json root = json::parse(header, header + header_bytes, nullptr,
                                /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return InvalidArgument("safetensors: the header is not a JSON object");
  }
  const uint8_t* data_start = data + 8 + header_bytes;
  const uint64_t data_bytes = size - 8 - header_bytes;
  tensors_.clear();
  tensors_.reserve(root.size());
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    SafetensorsTensor t;
    EMBER_RETURN_IF_ERROR(ParseEntry(it.key(), it.value(), data_start, data_bytes, &t));
    tensors_.push_back(std::move(t));
  }
  // No two tensors may share bytes.
  std::vector<const SafetensorsTensor*> by_offset;
  for (const SafetensorsTensor& t : tensors_) {
    if (t.size_bytes > 0) by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const SafetensorsTensor* a, const SafetensorsTensor* b) {
              return a->data < b->data;
            });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i - 1]->data + by_offset[i - 1]->size_bytes > by_offset[i]->data) {
      return InvalidArgument("safetensors: tensors '%.80s' and '%.80s' overlap",
                             by_offset[i - 1]->name.c_str(), by_offset[i]->name.c_str());
    }
  }
  std::sort(tensors_.begin(), tensors_.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
              return a.name < b.name;
            });
  return Status::Ok();
}

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Parse(const uint8_t* data,
                                                                size_t size) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  EMBER_RETURN_IF_ERROR(file->ParseHeader(data, size));
  return file;
}

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  EMBER_RETURN_IF_ERROR(file->mapping_.Map(path));
  Status s = file->ParseHeader(file->mapping_.data(), file->mapping_.size());
  if (!s.ok()) return Status(s.code(), "%s: %s", path.c_str(), s.message());
  return file;
}

const SafetensorsTensor* SafetensorsFile::Find(const std::string& name) const {
  auto it = std::lower_bound(
      tensors_.begin(), tensors_.end(), name,
      [](const SafetensorsTensor& t, const std::string& n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

Status SafetensorsToF32(const SafetensorsTensor& t, std::vector<float>* out) {
  out->resize(t.elements);
  const uint8_t* p = t.data;
  if (t.dtype == "F32") {
    if (t.size_bytes) memcpy(out->data(), p, t.size_bytes);
  } else if (t.dtype == "F16" || t.dtype == "BF16") {
    const bool half = t.dtype == "F16";
    for (uint64_t i = 0; i < t.elements; ++i) {
      const uint16_t bits = static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8));
      (*out)[i] = half ? HalfToFloat(bits) : BFloat16ToFloat(bits);
    }
  } else if (t.dtype == "F64") {
    for (uint64_t i = 0; i < t.elements; ++i) {
      double v;
      memcpy(&v, p + 8 * i, 8);
      (*out)[i] = static_cast<float>(v);
    }
  } else {
    return InvalidArgument(
        "tensor '%.80s' has dtype %s; ember converts F32, F16, BF16 "
        "and F64",
        t.name.c_str(), t.dtype.c_str());
  }
  return Status::Ok();
}

}  // namespace ember::tools
