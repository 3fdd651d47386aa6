// Template values: the heap, truth, equality, str(), repr() and JSON (see
// template_value.h), as Python writes them.
#include "runtime/chat/template_value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ember::tmpl {

Value List::at(uint32_t i) const {
  const int64_t index = start + static_cast<int64_t>(i) * step;
  if (messages) {
    Value v;
    v.kind = Kind::kMessage;
    v.message = &messages[index];
    return v;
  }
  return values[index];
}

void* Heap::Allocate(size_t bytes) {
  if (building_ || full_) {
    full_ = true;
    return nullptr;
  }
  // Aligned to 8 in memory (the buffer itself may start anywhere); text_ <= top_ holds.
  const uintptr_t base = reinterpret_cast<uintptr_t>(buffer_);
  if (bytes > top_ || top_ - bytes < text_) {
    full_ = true;
    return nullptr;
  }
  const size_t at = static_cast<size_t>(((base + top_ - bytes) & ~uintptr_t{7}) - base);
  if (at < text_ || at > top_) {
    full_ = true;
    return nullptr;
  }
  top_ = at;
  return buffer_ + top_;
}

bool Heap::Write(std::string_view text) {
  if (full_ || building_ || text.size() > top_ - text_) {
    full_ = true;
    return false;
  }
  memcpy(buffer_ + text_, text.data(), text.size());
  text_ += text.size();
  return true;
}

void Heap::Begin() {
  building_ = !full_;
  build_start_ = text_;
  build_bytes_ = 0;
}

void Heap::Append(std::string_view piece) {
  if (!building_) return;
  if (piece.size() > top_ - build_start_ - build_bytes_) {
    building_ = false;
    full_ = true;
    return;
  }
  memcpy(buffer_ + build_start_ + build_bytes_, piece.data(), piece.size());
  build_bytes_ += piece.size();
}

Value Heap::End() {
  if (!building_) {
    full_ = true;
    return Value::String("");
  }
  building_ = false;
  const size_t n = build_bytes_;
  if (n > top_ - text_) {
    full_ = true;
    return Value::String("");
  }
  // The bytes move up to the scratch side (the regions may overlap: memmove).
  const size_t at = top_ - n;
  memmove(buffer_ + at, buffer_ + build_start_, n);
  top_ = at;  // the next allocation aligns itself
  return Value::String(std::string_view(buffer_ + at, n));
}

bool Heap::EndAsText() {
  if (!building_) {
    full_ = true;
    return false;
  }
  building_ = false;
  text_ += build_bytes_;  // built right where the text ends
  return true;
}

void Heap::Pop(size_t mark, const Value& v) {
  if (v.kind == Kind::kString && !building_ && v.s == buffer_ + top_ &&
      v.size <= mark - top_) {
    top_ += v.size;
  }
}

bool Truthy(const Value& v) {
  switch (v.kind) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return v.b;
    case Kind::kInt:
      return v.i != 0;
    case Kind::kFloat:
      return v.f != 0.0;
    case Kind::kString:
      return v.size != 0;
    case Kind::kList:
      return v.list->count != 0;
    case Kind::kDict:
    case Kind::kNamespace:
      return v.dict->count != 0;
    case Kind::kMessage:
      return true;
  }
  return false;
}

uint32_t MappingSize(const Value& m) {
  if (m.kind == Kind::kMessage) return 2;
  return m.is_mapping() ? m.dict->count : 0;
}

Value MappingKey(const Value& m, uint32_t i) {
  if (m.kind == Kind::kMessage) return Value::String(i == 0 ? "role" : "content");
  return m.dict->keys[i];
}

Value MappingValue(const Value& m, uint32_t i) {
  if (m.kind == Kind::kMessage) {
    return Value::String(i == 0 ? m.message->role : m.message->content);
  }
  return m.dict->values[i];
}

Value Lookup(const Value& m, std::string_view key) {
  const uint32_t n = MappingSize(m);
  for (uint32_t i = 0; i < n; ++i) {
    const Value k = MappingKey(m, i);
    if (k.is_string() && k.str() == key) return MappingValue(m, i);
  }
  return Value::Undefined();
}

namespace {

double AsDouble(const Value& v) {
  return v.kind == Kind::kFloat ? v.f
         : v.kind == Kind::kInt ? static_cast<double>(v.i)
                                : (v.b ? 1.0 : 0.0);
}

}  // namespace

bool Equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind != Kind::kFloat && b.kind != Kind::kFloat) {
      const int64_t x = a.kind == Kind::kInt ? a.i : a.b,
                    y = b.kind == Kind::kInt ? b.i : b.b;
      return x == y;
    }
    return AsDouble(a) == AsDouble(b);
  }
  if (a.is_string() || b.is_string())
    return a.is_string() && b.is_string() && a.str() == b.str();
  if (a.kind == Kind::kList && b.kind == Kind::kList) {
    if (a.list->count != b.list->count) return false;
    for (uint32_t i = 0; i < a.list->count; ++i) {
      if (!Equal(a.list->at(i), b.list->at(i))) return false;
    }
    return true;
  }
  if (a.is_mapping() && b.is_mapping()) {
    const uint32_t n = MappingSize(a);
    if (n != MappingSize(b)) return false;
    for (uint32_t i = 0; i < n; ++i) {
      const Value key = MappingKey(a, i);
      const Value other = Lookup(b, key.str());
      if (other.kind == Kind::kUndefined || !Equal(MappingValue(a, i), other))
        return false;
    }
    return true;
  }
  return a.kind == b.kind && (a.kind == Kind::kNone || a.kind == Kind::kUndefined);
}

size_t FormatFloat(double f, char* buf) {
  if (std::isnan(f)) return static_cast<size_t>(snprintf(buf, 32, "nan"));
  if (std::isinf(f))
    return static_cast<size_t>(snprintf(buf, 32, f < 0 ? "-inf" : "inf"));
  // The shortest digits that read back as f, then Python's layout: positional for
  // exponents in [-4, 16), else d.ddde+XX.
  char e[40];
  for (int precision = 1; precision <= 17; ++precision) {
    snprintf(e, sizeof(e), "%.*e", precision - 1, f);
    if (strtod(e, nullptr) == f) break;
  }
  char* exp_at = strchr(e, 'e');
  const int exponent = atoi(exp_at + 1);
  *exp_at = '\0';
  char digits[24];
  size_t n = 0;
  const bool negative = e[0] == '-';
  for (const char* p = e + negative; *p; ++p) {
    if (*p != '.') digits[n++] = *p;
  }
  while (n > 1 && digits[n - 1] == '0') --n;
  size_t out = 0;
  if (negative) buf[out++] = '-';
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      buf[out++] = '0';
      buf[out++] = '.';
      for (int i = -1; i > exponent; --i) buf[out++] = '0';
      for (size_t i = 0; i < n; ++i) buf[out++] = digits[i];
    } else {
      for (int i = 0; i <= exponent; ++i) {
        buf[out++] = static_cast<size_t>(i) < n ? digits[i] : '0';
      }
      buf[out++] = '.';
      if (n > static_cast<size_t>(exponent) + 1) {
        for (size_t i = static_cast<size_t>(exponent) + 1; i < n; ++i)
          buf[out++] = digits[i];
      } else {
        buf[out++] = '0';
      }
    }
  } else {
    buf[out++] = digits[0];
    if (n > 1) {
      buf[out++] = '.';
      for (size_t i = 1; i < n; ++i) buf[out++] = digits[i];
    }
    out += static_cast<size_t>(snprintf(buf + out, 8, "e%c%02d", exponent < 0 ? '-' : '+',
                                        exponent < 0 ? -exponent : exponent));
  }
  buf[out] = '\0';
  return out;
}

namespace {

void AppendInt(int64_t i, Heap* heap) {
  char buf[24];
  heap->Append(
      std::string_view(buf, static_cast<size_t>(snprintf(buf, sizeof(buf), "%lld",
                                                         static_cast<long long>(i)))));
}

// Python's repr of a string: single quotes unless it holds one and no double quote.
void AppendRepr(std::string_view s, Heap* heap) {
  const char quote =
      s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos
          ? '"'
          : '\'';
  heap->AppendChar(quote);
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      heap->AppendChar('\\');
      heap->AppendChar(c);
    } else if (c == '\n') {
      heap->Append("\\n");
    } else if (c == '\r') {
      heap->Append("\\r");
    } else if (c == '\t') {
      heap->Append("\\t");
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\x%02x", u);
      heap->Append(buf);
    } else {
      heap->AppendChar(c);
    }
  }
  heap->AppendChar(quote);
}

void AppendItem(const Value& v, Heap* heap) {
  if (v.is_string()) {
    AppendRepr(v.str(), heap);
  } else {
    AppendStr(v, heap);
  }
}

}  // namespace

void AppendStr(const Value& v, Heap* heap) {
  switch (v.kind) {
    case Kind::kUndefined:
      return;
    case Kind::kNone:
      heap->Append("None");
      return;
    case Kind::kBool:
      heap->Append(v.b ? "True" : "False");
      return;
    case Kind::kInt:
      AppendInt(v.i, heap);
      return;
    case Kind::kFloat: {
      char buf[32];
      heap->Append(std::string_view(buf, FormatFloat(v.f, buf)));
      return;
    }
    case Kind::kString:
      heap->Append(v.str());
      return;
    case Kind::kList:
      heap->AppendChar('[');
      for (uint32_t i = 0; i < v.list->count; ++i) {
        if (i) heap->Append(", ");
        AppendItem(v.list->at(i), heap);
      }
      heap->AppendChar(']');
      return;
    case Kind::kNamespace:
    case Kind::kDict:
    case Kind::kMessage: {
      if (v.kind == Kind::kNamespace) heap->Append("<Namespace ");
      heap->AppendChar('{');
      for (uint32_t i = 0; i < MappingSize(v); ++i) {
        if (i) heap->Append(", ");
        AppendItem(MappingKey(v, i), heap);
        heap->Append(": ");
        AppendItem(MappingValue(v, i), heap);
      }
      heap->AppendChar('}');
      if (v.kind == Kind::kNamespace) heap->AppendChar('>');
      return;
    }
  }
}

size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

size_t CodePointOffset(std::string_view s, size_t index) {
  size_t at = 0, seen = 0;
  while (at < s.size()) {
    if ((static_cast<unsigned char>(s[at]) & 0xC0) != 0x80) {
      if (seen == index) return at;
      ++seen;
    }
    ++at;
  }
  return s.size();
}

}  // namespace ember::tmpl
