// Template values as JSON text: json.dumps(value, ensure_ascii=False, indent=indent), as
// Hugging Face's tojson filter writes them (see template_value.h; the reader is
// template_json.cc).
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "runtime/chat/template_value.h"

namespace ember::tmpl {
namespace {

void AppendJsonString(std::string_view s, Heap* heap) {
  heap->AppendChar('"');
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        heap->Append("\\\"");
        break;
      case '\\':
        heap->Append("\\\\");
        break;
      case '\n':
        heap->Append("\\n");
        break;
      case '\r':
        heap->Append("\\r");
        break;
      case '\t':
        heap->Append("\\t");
        break;
      case '\b':
        heap->Append("\\b");
        break;
      case '\f':
        heap->Append("\\f");
        break;
      default:
        if (u < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", u);
          heap->Append(buf);
        } else {
          heap->AppendChar(c);
        }
    }
  }
  heap->AppendChar('"');
}

// Stops at a full buffer: indent=10**9 fails at once, not after 10**9 appends.
void NewLine(int64_t indent, int depth, Heap* heap) {
  heap->AppendChar('\n');
  for (int64_t i = 0; i < indent * depth && !heap->full(); ++i) heap->AppendChar(' ');
}

}  // namespace

bool AppendJson(const Value& v, int64_t indent, int depth, Heap* heap) {
  if (depth > 64) return false;
  switch (v.kind) {
    case Kind::kUndefined:
      return false;
    case Kind::kNone:
      heap->Append("null");
      return true;
    case Kind::kBool:
      heap->Append(v.b ? "true" : "false");
      return true;
    case Kind::kInt: {
      char buf[24];
      heap->Append(std::string_view(
          buf, static_cast<size_t>(
                   snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v.i)))));
      return true;
    }
    case Kind::kFloat: {
      if (std::isnan(v.f)) {
        heap->Append("NaN");
      } else if (std::isinf(v.f)) {
        heap->Append(v.f < 0 ? "-Infinity" : "Infinity");
      } else {
        char buf[32];
        heap->Append(std::string_view(buf, FormatFloat(v.f, buf)));
      }
      return true;
    }
    case Kind::kString:
      AppendJsonString(v.str(), heap);
      return true;
    case Kind::kList: {
      heap->AppendChar('[');
      if (v.list->count == 0) {
        heap->AppendChar(']');
        return true;
      }
      for (uint32_t i = 0; i < v.list->count; ++i) {
        if (i) heap->AppendChar(',');
        if (indent >= 0) {
          NewLine(indent, depth + 1, heap);
        } else if (i) {
          heap->AppendChar(' ');
        }
        if (!AppendJson(v.list->at(i), indent, depth + 1, heap)) return false;
      }
      if (indent >= 0) NewLine(indent, depth, heap);
      heap->AppendChar(']');
      return true;
    }
    case Kind::kDict:
    case Kind::kNamespace:
    case Kind::kMessage: {
      const uint32_t n = MappingSize(v);
      heap->AppendChar('{');
      if (n == 0) {
        heap->AppendChar('}');
        return true;
      }
      for (uint32_t i = 0; i < n; ++i) {
        if (i) heap->AppendChar(',');
        if (indent >= 0) {
          NewLine(indent, depth + 1, heap);
        } else if (i) {
          heap->AppendChar(' ');
        }
        const Value key = MappingKey(v, i);
        if (!key.is_string()) return false;
        AppendJsonString(key.str(), heap);
        heap->Append(": ");
        if (!AppendJson(MappingValue(v, i), indent, depth + 1, heap)) return false;
      }
      if (indent >= 0) NewLine(indent, depth, heap);
      heap->AppendChar('}');
      return true;
    }
  }
  return false;
}

}  // namespace ember::tmpl
