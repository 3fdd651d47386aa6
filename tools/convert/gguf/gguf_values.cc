// GGUF's value types and GGML's tensor types (names, sizes), and typed reads of metadata
// values (see gguf_reader.h): integers of any width, floats, bools, strings and arrays,
// each with a message that names the key when it is missing or of the wrong type.
#include <cmath>
#include <cstring>

#include "tools/convert/gguf/gguf_reader.h"
#include "tools/util/quote.h"

namespace ember::tools {
namespace {

struct TypeEntry {
  uint32_t type;
  GgmlTypeInfo info;
};

// Block sizes as GGML's type traits (ggml.c) define them; the layouts of the types ember
// imports are in gguf_blocks.h.
constexpr TypeEntry kGgmlTypes[] = {
    {0, {"f32", 1, 4}},         {1, {"f16", 1, 2}},         {2, {"q4_0", 32, 18}},
    {3, {"q4_1", 32, 20}},      {6, {"q5_0", 32, 22}},      {7, {"q5_1", 32, 24}},
    {8, {"q8_0", 32, 34}},      {9, {"q8_1", 32, 36}},      {10, {"q2_K", 256, 84}},
    {11, {"q3_K", 256, 110}},   {12, {"q4_K", 256, 144}},   {13, {"q5_K", 256, 176}},
    {14, {"q6_K", 256, 210}},   {15, {"q8_K", 256, 292}},   {16, {"iq2_xxs", 256, 66}},
    {17, {"iq2_xs", 256, 74}},  {18, {"iq3_xxs", 256, 98}}, {19, {"iq1_s", 256, 50}},
    {20, {"iq4_nl", 32, 18}},   {21, {"iq3_s", 256, 110}},  {22, {"iq2_s", 256, 82}},
    {23, {"iq4_xs", 256, 136}}, {24, {"i8", 1, 1}},         {25, {"i16", 1, 2}},
    {26, {"i32", 1, 4}},        {27, {"i64", 1, 8}},        {28, {"f64", 1, 8}},
    {29, {"iq1_m", 256, 56}},   {30, {"bf16", 1, 2}},       {34, {"tq1_0", 256, 54}},
    {35, {"tq2_0", 256, 66}},   {39, {"mxfp4", 32, 17}},
};

template <typename T>
T Load(const uint8_t* p) {
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}

bool IsInteger(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kUint16:
    case GgufType::kInt16:
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kUint64:
    case GgufType::kInt64:
      return true;
    default:
      return false;
  }
}

// An integer value: as int64 (*negative_or_huge false), or it does not fit int64.
bool LoadInteger(GgufType type, const uint8_t* p, int64_t* out) {
  switch (type) {
    case GgufType::kUint8:
      *out = Load<uint8_t>(p);
      return true;
    case GgufType::kInt8:
      *out = Load<int8_t>(p);
      return true;
    case GgufType::kUint16:
      *out = Load<uint16_t>(p);
      return true;
    case GgufType::kInt16:
      *out = Load<int16_t>(p);
      return true;
    case GgufType::kUint32:
      *out = Load<uint32_t>(p);
      return true;
    case GgufType::kInt32:
      *out = Load<int32_t>(p);
      return true;
    case GgufType::kUint64: {
      const uint64_t v = Load<uint64_t>(p);
      *out = static_cast<int64_t>(v);
      return v <= static_cast<uint64_t>(INT64_MAX);
    }
    case GgufType::kInt64:
      *out = Load<int64_t>(p);
      return true;
    default:
      return false;
  }
}

// "an array of uint8" / "a string": what a value is, for messages.
std::string Describe(const GgufValue& v) {
  if (v.type == GgufType::kArray) {
    return std::string("an array of ") + GgufTypeName(v.element_type);
  }
  return std::string(v.type == GgufType::kInt8 || v.type == GgufType::kInt16 ||
                             v.type == GgufType::kInt32 || v.type == GgufType::kInt64
                         ? "an "
                         : "a ") +
         GgufTypeName(v.type);
}

}  // namespace

const char* GgufTypeName(GgufType type) {
  static const char* const kNames[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                       "int32",  "float32", "bool",   "string", "array",
                                       "uint64", "int64",   "float64"};
  const auto i = static_cast<uint32_t>(type);
  return i < 13 ? kNames[i] : "unknown";
}

size_t GgufScalarBytes(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
      return 8;
    case GgufType::kString:
    case GgufType::kArray:
      return 0;
  }
  return 0;
}

const GgmlTypeInfo* FindGgmlType(uint32_t type) {
  for (const TypeEntry& e : kGgmlTypes) {
    if (e.type == type) return &e.info;
  }
  return nullptr;
}

std::string GgmlTypeName(uint32_t type) {
  const GgmlTypeInfo* info = FindGgmlType(type);
  return info ? info->name : "type " + std::to_string(type);
}

std::string GgufQuote(std::string_view text) {
  constexpr size_t kMax = 60;
  if (text.size() <= kMax) return QuotePiece(text);
  return QuotePiece(text.substr(0, kMax)) + "...";
}

Status GgufFile::GetInt(std::string_view key, bool required, int64_t fallback,
                        int64_t min, int64_t max, int64_t* out) const {
  const GgufKv* kv = Find(key);
  const std::string k(key);
  if (!kv) {
    if (required) return InvalidModel("GGUF: missing metadata key %s", k.c_str());
    *out = fallback;
    return Status::Ok();
  }
  if (!IsInteger(kv->value.type)) {
    return InvalidModel("GGUF: %s is %s; expected an integer", k.c_str(),
                        Describe(kv->value).c_str());
  }
  int64_t v = 0;
  if (!LoadInteger(kv->value.type, kv->value.data, &v) || v < min || v > max) {
    return InvalidModel("GGUF: %s is %s (%lld to %lld allowed)", k.c_str(),
                        kv->value.type == GgufType::kUint64 && v < 0
                            ? std::to_string(Load<uint64_t>(kv->value.data)).c_str()
                            : std::to_string(v).c_str(),
                        static_cast<long long>(min), static_cast<long long>(max));
  }
  *out = v;
  return Status::Ok();
}

Status GgufFile::GetFloat(std::string_view key, bool required, double fallback,
                          double* out) const {
  const GgufKv* kv = Find(key);
  const std::string k(key);
  if (!kv) {
    if (required) return InvalidModel("GGUF: missing metadata key %s", k.c_str());
    *out = fallback;
    return Status::Ok();
  }
  if (kv->value.type == GgufType::kFloat32) {
    *out = Load<float>(kv->value.data);
  } else if (kv->value.type == GgufType::kFloat64) {
    *out = Load<double>(kv->value.data);
  } else {
    int64_t v;
    if (!LoadInteger(kv->value.type, kv->value.data, &v)) {
      return InvalidModel("GGUF: %s is %s; expected a number", k.c_str(),
                          Describe(kv->value).c_str());
    }
    *out = static_cast<double>(v);
  }
  if (!std::isfinite(*out)) {
    return InvalidModel("GGUF: %s is %g; expected a finite number", k.c_str(), *out);
  }
  return Status::Ok();
}

Status GgufFile::GetBool(std::string_view key, bool required, bool fallback,
                         bool* out) const {
  const GgufKv* kv = Find(key);
  const std::string k(key);
  if (!kv) {
    if (required) return InvalidModel("GGUF: missing metadata key %s", k.c_str());
    *out = fallback;
    return Status::Ok();
  }
  if (kv->value.type != GgufType::kBool) {
    return InvalidModel("GGUF: %s is %s; expected a bool", k.c_str(),
                        Describe(kv->value).c_str());
  }
  *out = *kv->value.data != 0;
  return Status::Ok();
}

Status GgufFile::GetString(std::string_view key, bool required,
                           std::string_view* out) const {
  const GgufKv* kv = Find(key);
  const std::string k(key);
  if (!kv) {
    if (required) return InvalidModel("GGUF: missing metadata key %s", k.c_str());
    *out = std::string_view();
    return Status::Ok();
  }
  if (kv->value.type != GgufType::kString) {
    return InvalidModel("GGUF: %s is %s; expected a string", k.c_str(),
                        Describe(kv->value).c_str());
  }
  *out = std::string_view(reinterpret_cast<const char*>(kv->value.data),
                          static_cast<size_t>(kv->value.count));
  return Status::Ok();
}

Status GgufFile::GetArray(std::string_view key, GgufType element_type, bool required,
                          const GgufValue** out) const {
  const GgufKv* kv = Find(key);
  const std::string k(key);
  *out = nullptr;
  if (!kv) {
    if (required) return InvalidModel("GGUF: missing metadata key %s", k.c_str());
    return Status::Ok();
  }
  if (kv->value.type != GgufType::kArray || kv->value.element_type != element_type) {
    return InvalidModel("GGUF: %s is %s; expected an array of %s", k.c_str(),
                        Describe(kv->value).c_str(), GgufTypeName(element_type));
  }
  *out = &kv->value;
  return Status::Ok();
}

std::vector<std::string_view> GgufStrings(const GgufValue& array) {
  std::vector<std::string_view> out;
  if (array.type != GgufType::kArray || array.element_type != GgufType::kString)
    return out;
  out.reserve(static_cast<size_t>(array.count));
  const uint8_t* p = array.data;
  for (uint64_t i = 0; i < array.count; ++i) {  // the parser checked every length
    const uint64_t n = Load<uint64_t>(p);
    out.emplace_back(reinterpret_cast<const char*>(p + 8), static_cast<size_t>(n));
    p += 8 + n;
  }
  return out;
}

std::vector<GgufValue> GgufSubArrays(const GgufValue& array) {
  std::vector<GgufValue> out;
  if (array.type != GgufType::kArray || array.element_type != GgufType::kArray)
    return out;
  out.reserve(static_cast<size_t>(array.count));
  const uint8_t* p = array.data;
  for (uint64_t i = 0; i < array.count; ++i) {  // the parser checked every element
    GgufValue v;
    v.type = GgufType::kArray;
    v.element_type = static_cast<GgufType>(Load<uint32_t>(p));
    v.count = Load<uint64_t>(p + 4);
    v.data = p + 12;
    const size_t element_bytes = GgufScalarBytes(v.element_type);
    if (element_bytes) {
      v.bytes = v.count * element_bytes;
    } else if (v.element_type == GgufType::kString) {
      const uint8_t* q = v.data;
      for (uint64_t j = 0; j < v.count; ++j) q += 8 + Load<uint64_t>(q);
      v.bytes = static_cast<uint64_t>(q - v.data);
    } else {
      const std::vector<GgufValue> inner = GgufSubArrays(v);
      v.bytes =
          inner.empty()
              ? 0
              : static_cast<uint64_t>(inner.back().data + inner.back().bytes - v.data);
    }
    out.push_back(v);
    p = v.data + v.bytes;
  }
  return out;
}

double GgufNumberAt(const GgufValue& array, uint64_t i) {
  const size_t bytes = GgufScalarBytes(array.element_type);
  const uint8_t* p = array.data + i * bytes;
  switch (array.element_type) {
    case GgufType::kFloat32:
      return Load<float>(p);
    case GgufType::kFloat64:
      return Load<double>(p);
    case GgufType::kBool:
      return *p;
    case GgufType::kUint64:
      return static_cast<double>(Load<uint64_t>(p));
    default: {
      int64_t v = 0;
      LoadInteger(array.element_type, p, &v);
      return static_cast<double>(v);
    }
  }
}

}  // namespace ember::tools
