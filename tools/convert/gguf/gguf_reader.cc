// GGUF reader (see gguf_reader.h): one pass over the header with a bounds-checked
// cursor, then the directory checks (duplicates, alignment, ranges, overlaps).
#include "tools/convert/gguf/gguf_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "tools/util/quote.h"

namespace ember::tools {
namespace {

// Types GGML removed: a file holding one predates (or postdates) what readers accept.
bool RemovedGgmlType(uint32_t type) {
  return type == 4 || type == 5 || (type >= 31 && type <= 33) ||
         (type >= 36 && type <= 38);
}

// Reads little-endian fields; every read checks the bytes left first.
class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}
  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }
  const uint8_t* here() const { return data_ + pos_; }
  bool Read(void* out, uint64_t n) {
    if (n > left()) return false;
    memcpy(out, data_ + pos_, n);
    pos_ += n;
    return true;
  }
  bool Skip(uint64_t n) {
    if (n > left()) return false;
    pos_ += n;
    return true;
  }
  bool String(std::string_view* s) {
    uint64_t n;
    if (!Read(&n, 8) || n > left()) return false;
    *s = std::string_view(reinterpret_cast<const char*>(here()), static_cast<size_t>(n));
    pos_ += n;
    return true;
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

bool KnownValueType(uint32_t type) { return type <= 12; }

// Where a value is, for a message (built only for one): "metadata "key"", and "[i]"
// for element i of an array of arrays (the innermost index).
std::string Where(std::string_view key, int64_t index) {
  std::string where = "metadata " + GgufQuote(key);
  if (index >= 0) where += "[" + std::to_string(index) + "]";
  return where;
}

// Parses one value of `type` of `key` at the cursor into *out (`index`: which element of
// an array of arrays it is, or -1).
Status ParseValue(Cursor* c, GgufType type, int depth, std::string_view key,
                  int64_t index, GgufValue* out) {
  out->type = type;
  out->count = 1;
  const uint64_t start = c->pos();
  if (type == GgufType::kString) {
    std::string_view s;
    if (!c->String(&s)) {
      return InvalidModel(
          "GGUF: %s: a string runs past the end of the file (at byte %llu)",
          Where(key, index).c_str(), static_cast<unsigned long long>(start));
    }
    out->data = reinterpret_cast<const uint8_t*>(s.data());
    out->count = s.size();
    out->bytes = s.size();
    return Status::Ok();
  }
  if (type != GgufType::kArray) {
    const size_t n = GgufScalarBytes(type);
    out->data = c->here();
    out->bytes = n;
    if (!c->Skip(n)) {
      return InvalidModel("GGUF: %s: its %s value runs past the end of the file",
                          Where(key, index).c_str(), GgufTypeName(type));
    }
    if (type == GgufType::kBool && *out->data > 1) {
      return InvalidModel("GGUF: %s: bool value %u (must be 0 or 1)",
                          Where(key, index).c_str(), *out->data);
    }
    return Status::Ok();
  }
  if (depth >= GgufFile::kMaxArrayDepth) {
    return InvalidModel("GGUF: %s: arrays nested deeper than %d",
                        Where(key, index).c_str(), GgufFile::kMaxArrayDepth);
  }
  uint32_t element_type;
  uint64_t count;
  if (!c->Read(&element_type, 4) || !c->Read(&count, 8)) {
    return InvalidModel("GGUF: %s: an array header runs past the end of the file",
                        Where(key, index).c_str());
  }
  if (!KnownValueType(element_type)) {
    return InvalidModel("GGUF: %s: array of unknown value type %u",
                        Where(key, index).c_str(), element_type);
  }
  out->element_type = static_cast<GgufType>(element_type);
  out->count = count;
  out->data = c->here();
  // The smallest an element can be: a string's length, an array's type and count.
  const size_t element_bytes = GgufScalarBytes(out->element_type);
  const uint64_t min_bytes = element_bytes                            ? element_bytes
                             : out->element_type == GgufType::kString ? 8
                                                                      : 12;
  if (count > c->left() / min_bytes) {
    return InvalidModel(
        "GGUF: %s: an array of %llu %s cannot fit in the %llu bytes left in the file",
        Where(key, index).c_str(), static_cast<unsigned long long>(count),
        GgufTypeName(out->element_type), static_cast<unsigned long long>(c->left()));
  }
  if (element_bytes) {
    c->Skip(count * element_bytes);  // fits: checked just above
  } else {
    for (uint64_t i = 0; i < count; ++i) {
      GgufValue element;
      EMBER_RETURN_IF_ERROR(ParseValue(c, out->element_type, depth + 1, key,
                                       static_cast<int64_t>(i), &element));
    }
  }
  out->bytes = static_cast<uint64_t>(c->here() - out->data);
  return Status::Ok();
}

std::string Clip(std::string_view s) { return GgufQuote(s); }

}  // namespace

Status GgufFile::ParseAll(const uint8_t* data, size_t size) {
  Cursor c(data, size);
  char magic[4];
  if (!c.Read(magic, 4) || memcmp(magic, "GGUF", 4) != 0) {
    if (size < 4) return InvalidModel("GGUF: the file is %zu bytes: no header", size);
    return InvalidModel("GGUF: not a GGUF file (it starts with %s, not \"GGUF\")",
                        QuotePiece(std::string_view(magic, 4)).c_str());
  }
  uint64_t tensor_count = 0, kv_count = 0;
  if (!c.Read(&version_, 4)) return InvalidModel("GGUF: the header is truncated");
  if (version_ != 0 && (version_ & 0xFFFF) == 0) {
    return InvalidModel(
        "GGUF: a big-endian file (version bytes %08x); ember reads "
        "little-endian GGUF",
        version_);
  }
  if (version_ == 1) {
    return InvalidModel(
        "GGUF: version 1 (2023's first draft) is not supported: convert the "
        "model again with a current llama.cpp (versions 2 and 3 are read)");
  }
  if (version_ != 2 && version_ != 3) {
    return InvalidModel("GGUF: version %u is not one ember reads (2 and 3)", version_);
  }
  if (!c.Read(&tensor_count, 8) || !c.Read(&kv_count, 8)) {
    return InvalidModel("GGUF: the %zu-byte file is shorter than the 24-byte header",
                        size);
  }
  // The smallest entries: a 1-byte key, type and a 1-byte value (14 bytes); a 1-byte
  // name, n_dims, one dimension, type and offset (33 bytes). Checking the counts against
  // the bytes left bounds every allocation below by the file's size.
  if (kv_count > c.left() / 14) {
    return InvalidModel("GGUF: %llu metadata entries cannot fit in the %llu bytes left",
                        static_cast<unsigned long long>(kv_count),
                        static_cast<unsigned long long>(c.left()));
  }
  if (tensor_count > c.left() / 33) {
    return InvalidModel("GGUF: %llu tensors cannot fit in the %llu bytes left",
                        static_cast<unsigned long long>(tensor_count),
                        static_cast<unsigned long long>(c.left()));
  }
  kvs_.reserve(static_cast<size_t>(kv_count));
  for (uint64_t i = 0; i < kv_count; ++i) {
    GgufKv kv;
    uint32_t type;
    if (!c.String(&kv.key)) {
      return InvalidModel(
          "GGUF: the key of metadata entry %llu of %llu runs past the end "
          "of the file",
          static_cast<unsigned long long>(i), static_cast<unsigned long long>(kv_count));
    }
    if (kv.key.empty()) {
      return InvalidModel("GGUF: metadata entry %llu has an empty key",
                          static_cast<unsigned long long>(i));
    }

    if (!c.Read(&type, 4)) {
      return InvalidModel("GGUF: %s: the value type runs past the end of the file",
                          Where(kv.key, -1).c_str());
    }
    if (!KnownValueType(type)) {
      return InvalidModel("GGUF: %s: unknown value type %u", Where(kv.key, -1).c_str(),
                          type);
    }
    EMBER_RETURN_IF_ERROR(
        ParseValue(&c, static_cast<GgufType>(type), 0, kv.key, -1, &kv.value));
    kvs_.push_back(kv);
  }
  kv_order_.resize(kvs_.size());
  for (uint32_t i = 0; i < kv_order_.size(); ++i) kv_order_[i] = i;
  std::sort(kv_order_.begin(), kv_order_.end(),
            [&](uint32_t a, uint32_t b) { return kvs_[a].key < kvs_[b].key; });
  for (size_t i = 1; i < kv_order_.size(); ++i) {
    if (kvs_[kv_order_[i]].key == kvs_[kv_order_[i - 1]].key) {
      return InvalidModel("GGUF: metadata key %s appears twice",
                          Clip(kvs_[kv_order_[i]].key).c_str());
    }
  }
  int64_t alignment;
  EMBER_RETURN_IF_ERROR(
      GetInt("general.alignment", false, kDefaultAlignment, 1, 1 << 30, &alignment));
  if ((alignment & (alignment - 1)) != 0) {
    return InvalidModel("GGUF: general.alignment is %lld, not a power of two",
                        static_cast<long long>(alignment));
  }
  alignment_ = static_cast<uint32_t>(alignment);

  tensors_.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    GgufTensorInfo t;
    if (!c.String(&t.name)) {
      return InvalidModel(
          "GGUF: the name of tensor %llu of %llu runs past the end of the "
          "file",
          static_cast<unsigned long long>(i),
          static_cast<unsigned long long>(tensor_count));
    }
    if (t.name.empty() || t.name.size() > kMaxNameBytes) {
      return InvalidModel("GGUF: tensor %llu has a name of %zu bytes (1 to %zu allowed)",
                          static_cast<unsigned long long>(i), t.name.size(),
                          kMaxNameBytes);
    }
    if (!c.Read(&t.n_dims, 4)) {
      return InvalidModel("GGUF: tensor %s: truncated", Clip(t.name).c_str());
    }
    if (t.n_dims < 1 || t.n_dims > 4) {
      return InvalidModel("GGUF: tensor %s has %u dimensions (1 to 4)",
                          Clip(t.name).c_str(), t.n_dims);
    }
    t.elements = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      if (!c.Read(&t.ne[d], 8)) {
        return InvalidModel("GGUF: tensor %s: truncated", Clip(t.name).c_str());
      }
      if (t.ne[d] == 0 || t.ne[d] > (uint64_t{1} << 48)) {
        return InvalidModel("GGUF: tensor %s: dimension %u is %llu", Clip(t.name).c_str(),
                            d, static_cast<unsigned long long>(t.ne[d]));
      }
      if (__builtin_mul_overflow(t.elements, t.ne[d], &t.elements) ||
          t.elements > (uint64_t{1} << 48)) {
        return InvalidModel("GGUF: tensor %s: its dimensions multiply past 2^48 elements",
                            Clip(t.name).c_str());
      }
    }
    if (!c.Read(&t.type, 4) || !c.Read(&t.offset, 8)) {
      return InvalidModel("GGUF: tensor %s: truncated", Clip(t.name).c_str());
    }
    const GgmlTypeInfo* info = FindGgmlType(t.type);
    if (!info) {
      return InvalidModel("GGUF: tensor %s has %s GGML type %u", Clip(t.name).c_str(),
                          RemovedGgmlType(t.type) ? "the removed" : "unknown", t.type);
    }
    if (t.ne[0] % info->block_elements != 0) {
      return InvalidModel(
          "GGUF: tensor %s: rows of %llu elements are not whole %s blocks "
          "of %u",
          Clip(t.name).c_str(), static_cast<unsigned long long>(t.ne[0]), info->name,
          info->block_elements);
    }
    // < 2^48 / 1 blocks of at most 292 bytes: no overflow.
    t.size_bytes = t.elements / info->block_elements * info->block_bytes;
    if (t.offset % alignment_ != 0) {
      return InvalidModel(
          "GGUF: tensor %s: offset %llu is not a multiple of the "
          "alignment %u",
          Clip(t.name).c_str(), static_cast<unsigned long long>(t.offset), alignment_);
    }
    tensors_.push_back(t);
  }
  // The data section starts at the next multiple of the alignment.
  data_offset_ = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  if (!tensors_.empty() && data_offset_ > size) {
    return InvalidModel(
        "GGUF: the data section would start at byte %llu, past the end of "
        "the %zu-byte file",
        static_cast<unsigned long long>(data_offset_), size);
  }
  const uint64_t data_bytes = tensors_.empty() ? 0 : size - data_offset_;
  for (GgufTensorInfo& t : tensors_) {
    if (t.offset > data_bytes || t.size_bytes > data_bytes - t.offset) {
      return InvalidModel(
          "GGUF: tensor %s: its %llu bytes at offset %llu run past the "
          "end of the %llu-byte data section",
          Clip(t.name).c_str(), static_cast<unsigned long long>(t.size_bytes),
          static_cast<unsigned long long>(t.offset),
          static_cast<unsigned long long>(data_bytes));
    }
    t.data = data + data_offset_ + t.offset;
  }
  tensor_order_.resize(tensors_.size());
  for (uint32_t i = 0; i < tensor_order_.size(); ++i) tensor_order_[i] = i;
  std::sort(tensor_order_.begin(), tensor_order_.end(), [&](uint32_t a, uint32_t b) {
    return tensors_[a].offset < tensors_[b].offset;
  });
  for (size_t i = 1; i < tensor_order_.size(); ++i) {
    const GgufTensorInfo& a = tensors_[tensor_order_[i - 1]];
    const GgufTensorInfo& b = tensors_[tensor_order_[i]];
    if (a.offset + a.size_bytes > b.offset) {
      return InvalidModel("GGUF: tensors %s and %s overlap", Clip(a.name).c_str(),
                          Clip(b.name).c_str());
    }
  }
  std::sort(tensor_order_.begin(), tensor_order_.end(),
            [&](uint32_t a, uint32_t b) { return tensors_[a].name < tensors_[b].name; });
  for (size_t i = 1; i < tensor_order_.size(); ++i) {
    if (tensors_[tensor_order_[i]].name == tensors_[tensor_order_[i - 1]].name) {
      return InvalidModel("GGUF: tensor name %s appears twice",
                          Clip(tensors_[tensor_order_[i]].name).c_str());
    }
  }
  return Status::Ok();
}

Result<std::unique_ptr<GgufFile>> GgufFile::Parse(const uint8_t* data, size_t size) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  EMBER_RETURN_IF_ERROR(file->ParseAll(data, size));
  return file;
}

Result<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  EMBER_RETURN_IF_ERROR(file->mapping_.Map(path));
  Status s = file->ParseAll(file->mapping_.data(), file->mapping_.size());
  if (!s.ok()) return Status(s.code(), "%s: %s", path.c_str(), s.message());
  return file;
}

size_t GgufFile::HeapBytes() const {
  return kvs_.capacity() * sizeof(GgufKv) + tensors_.capacity() * sizeof(GgufTensorInfo) +
         (kv_order_.capacity() + tensor_order_.capacity()) * sizeof(uint32_t);
}

const GgufKv* GgufFile::Find(std::string_view key) const {
  auto it =
      std::lower_bound(kv_order_.begin(), kv_order_.end(), key,
                       [&](uint32_t i, std::string_view k) { return kvs_[i].key < k; });
  return it != kv_order_.end() && kvs_[*it].key == key ? &kvs_[*it] : nullptr;
}

const GgufTensorInfo* GgufFile::FindTensor(std::string_view name) const {
  auto it = std::lower_bound(
      tensor_order_.begin(), tensor_order_.end(), name,
      [&](uint32_t i, std::string_view n) { return tensors_[i].name < n; });
  return it != tensor_order_.end() && tensors_[*it].name == name ? &tensors_[*it]
                                                                 : nullptr;
}

}  // namespace ember::tools
