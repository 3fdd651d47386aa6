// JSON text read into template values: the tools and the messages' extra keys a render
// gets (see template_value.h; the tojson writer is template_tojson.cc).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "runtime/chat/template_ops.h"
#include "runtime/chat/template_value.h"
#include "runtime/text/utf8.h"

namespace ember::tmpl {
namespace {

// Objects with more keys than this find repeated keys through a hash table in scratch
// (a linear search each would make a hostile object of 100,000 keys quadratic).
constexpr uint32_t kLinearKeys = 8;

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

uint64_t HashKey(std::string_view s) {
  uint64_t h = 1469598103934665603u;  // FNV-1a
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211u;
  return h;
}

// A recursive descent over the text, one level of recursion per array or object (at
// most kMaxJsonDepth). Each array or object is counted before it is read, so its
// values land in one allocation of the right size.
class JsonReader {
 public:
  JsonReader(std::string_view text, Heap* heap) : text_(text), heap_(heap) {}

  Status Read(Value* out) {
    size_t bad = 0;
    if (!ValidUtf8(text_, &bad)) return Error(bad, "invalid UTF-8");
    SkipSpace();
    EMBER_RETURN_IF_ERROR(ReadValue(0, out));
    SkipSpace();
    if (at_ != text_.size()) return Error(at_, "text after the value");
    return Status::Ok();
  }

 private:
  Status Error(size_t at, const char* what) const {
    return InvalidArgument("JSON at byte %zu: %s", at, what);
  }
  void SkipSpace() {
    while (at_ < text_.size() && IsJsonSpace(text_[at_])) ++at_;
  }
  bool Next(char c) {
    SkipSpace();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  bool Literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  Status ReadValue(int depth, Value* out) {
    SkipSpace();
    if (at_ == text_.size()) return Error(at_, "a value is missing");
    switch (text_[at_]) {
      case '{':
        return ReadObject(depth + 1, out);
      case '[':
        return ReadArray(depth + 1, out);
      case '"':
        return ReadString(out);
      case 't':
        *out = Value::Bool(true);
        return Literal("true") ? Status::Ok() : Error(at_, "not a JSON value");
      case 'f':
        *out = Value::Bool(false);
        return Literal("false") ? Status::Ok() : Error(at_, "not a JSON value");
      case 'n':
        *out = Value::None();
        return Literal("null") ? Status::Ok() : Error(at_, "not a JSON value");
      default:
        if (text_[at_] == '-' || IsDigit(text_[at_])) return ReadNumber(out);
        return Error(at_, "not a JSON value");
    }
  }

  // The values of the array or object opening at text_[open]: commas at its level, or
  // 0 when it closes at once. A malformed text may count wrong; reading it then fails.
  uint32_t Count(size_t open) const {
    const char close = text_[open] == '[' ? ']' : '}';
    size_t i = open + 1;
    while (i < text_.size() && IsJsonSpace(text_[i])) ++i;
    if (i < text_.size() && text_[i] == close) return 0;
    uint64_t commas = 0;
    int64_t level = 0;
    for (; i < text_.size(); ++i) {
      const char c = text_[i];
      if (c == '"') {
        for (++i; i < text_.size() && text_[i] != '"'; ++i) {
          if (text_[i] == '\\') ++i;
        }
      } else if (c == '[' || c == '{') {
        ++level;
      } else if (c == ']' || c == '}') {
        if (level-- == 0) break;
      } else if (c == ',' && level == 0) {
        ++commas;
      }
    }
    return commas + 1 > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(commas + 1);
  }

  Status TooDeep() const {
    return InvalidArgument(
        "JSON at byte %zu: nested deeper than kMaxJsonDepth (%d arrays and objects)", at_,
        kMaxJsonDepth);
  }

  Status ReadArray(int depth, Value* out) {
    if (depth > kMaxJsonDepth) return TooDeep();
    const size_t open = at_++;
    const uint32_t n = Count(open);
    Value* items = nullptr;
    *out = NewList(n, &items, heap_);
    if (heap_->full()) return HeapFull(*heap_);
    if (Next(']')) return n == 0 ? Status::Ok() : Error(at_ - 1, "unexpected ']'");
    for (uint32_t i = 0;; ++i) {
      if (i == n) return Error(at_, "malformed array");
      EMBER_RETURN_IF_ERROR(ReadValue(depth, &items[i]));
      if (Next(']')) {
        const_cast<List*>(out->list)->count = i + 1;
        return Status::Ok();
      }
      if (!Next(',')) return Error(at_, "expected ',' or ']'");
    }
  }

  Status ReadObject(int depth, Value* out) {
    if (depth > kMaxJsonDepth) return TooDeep();
    const size_t open = at_++;
    const uint32_t n = Count(open);
    *out = NewDict(n, Kind::kDict, heap_);
    // Slots of a hash table of the keys (index + 1; 0: empty), for large objects.
    uint32_t* table = nullptr;
    uint64_t mask = 0;
    if (n > kLinearKeys) {
      uint64_t slots = 16;
      while (slots < 2 * uint64_t{n}) slots *= 2;
      table = heap_->AllocateArray<uint32_t>(slots);
      if (table) memset(table, 0, slots * sizeof(uint32_t));
      mask = slots - 1;
    }
    if (heap_->full()) return HeapFull(*heap_);
    Dict* dict = out->dict;
    if (Next('}')) return n == 0 ? Status::Ok() : Error(at_ - 1, "unexpected '}'");
    for (;;) {
      SkipSpace();
      if (at_ == text_.size() || text_[at_] != '"') return Error(at_, "expected a key");
      Value key, value;
      EMBER_RETURN_IF_ERROR(ReadString(&key));
      if (!Next(':')) return Error(at_, "expected ':'");
      EMBER_RETURN_IF_ERROR(ReadValue(depth, &value));
      // A repeated key keeps its place and takes the new value (Python's dict).
      uint32_t* slot = nullptr;
      uint32_t found = UINT32_MAX;
      if (table) {
        for (uint64_t h = HashKey(key.str()) & mask;; h = (h + 1) & mask) {
          if (table[h] == 0) {
            slot = &table[h];
            break;
          }
          if (dict->keys[table[h] - 1].str() == key.str()) {
            found = table[h] - 1;
            break;
          }
        }
      } else {
        for (uint32_t i = 0; i < dict->count && found == UINT32_MAX; ++i) {
          if (dict->keys[i].str() == key.str()) found = i;
        }
      }
      if (found != UINT32_MAX) {
        dict->values[found] = value;
      } else {
        if (dict->count == n) return Error(at_, "malformed object");
        dict->keys[dict->count] = key;
        dict->values[dict->count++] = value;
        if (slot) *slot = dict->count;
      }
      if (Next('}')) return Status::Ok();
      if (!Next(',')) return Error(at_, "expected ',' or '}'");
    }
  }

  // Four hex digits at text_[at_] (after "\u").
  bool Hex4(uint32_t* code) {
    if (text_.size() - at_ < 4) return false;
    *code = 0;
    for (int i = 0; i < 4; ++i) {
      const int d = HexDigit(text_[at_ + i]);
      if (d < 0) return false;
      *code = *code * 16 + static_cast<uint32_t>(d);
    }
    at_ += 4;
    return true;
  }

  void AppendUtf8(uint32_t cp) {
    char buf[4];
    size_t n;
    if (cp < 0x80) {
      buf[0] = static_cast<char>(cp);
      n = 1;
    } else if (cp < 0x800) {
      buf[0] = static_cast<char>(0xC0 | (cp >> 6));
      buf[1] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 2;
    } else if (cp < 0x10000) {
      buf[0] = static_cast<char>(0xE0 | (cp >> 12));
      buf[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      buf[2] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 3;
    } else {
      buf[0] = static_cast<char>(0xF0 | (cp >> 18));
      buf[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      buf[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      buf[3] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 4;
    }
    heap_->Append(std::string_view(buf, n));
  }

  // The string opening at text_[at_]: a view of the text when it has no escapes, else
  // unescaped into scratch.
  Status ReadString(Value* out) {
    const size_t open = at_++;
    size_t end = at_;
    bool escapes = false;
    for (; end < text_.size() && text_[end] != '"'; ++end) {
      if (static_cast<unsigned char>(text_[end]) < 0x20) {
        return Error(end, "a control character in a string");
      }
      if (text_[end] == '\\') {
        escapes = true;
        ++end;
      }
    }
    if (end >= text_.size()) return Error(open, "unterminated string");
    if (end - at_ > UINT32_MAX) return Error(open, "a string of 4 GiB or more");
    if (!escapes) {
      *out = Value::String(text_.substr(at_, end - at_));
      at_ = end + 1;
      return Status::Ok();
    }
    heap_->Begin();
    while (at_ < end) {
      size_t run = at_;
      while (run < end && text_[run] != '\\') ++run;
      heap_->Append(text_.substr(at_, run - at_));
      at_ = run;
      if (at_ == end) break;
      const size_t escape = at_++;
      const char c = text_[at_++];
      switch (c) {
        case '"':
        case '\\':
        case '/':
          heap_->AppendChar(c);
          break;
        case 'b':
          heap_->AppendChar('\b');
          break;
        case 'f':
          heap_->AppendChar('\f');
          break;
        case 'n':
          heap_->AppendChar('\n');
          break;
        case 'r':
          heap_->AppendChar('\r');
          break;
        case 't':
          heap_->AppendChar('\t');
          break;
        case 'u': {
          uint32_t cp = 0, low = 0;
          if (!Hex4(&cp)) return Abandon(escape, "\\u needs four hex digits");
          if (cp >= 0xDC00 && cp <= 0xDFFF)
            return Abandon(escape, "a lone low surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end - at_ < 6 || text_[at_] != '\\' || text_[at_ + 1] != 'u') {
              return Abandon(escape, "a high surrogate without its low surrogate");
            }
            at_ += 2;
            if (!Hex4(&low) || low < 0xDC00 || low > 0xDFFF) {
              return Abandon(escape, "a high surrogate without its low surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(cp);
          break;
        }
        default:
          return Abandon(escape, "an unknown escape");
      }
    }
    at_ = end + 1;
    *out = heap_->End();
    return heap_->full() ? HeapFull(*heap_) : Status::Ok();
  }
  // An error in the middle of a string being built: the heap's open string is closed.
  Status Abandon(size_t at, const char* what) {
    heap_->End();
    return Error(at, what);
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?: an int when it has no fraction or
  // exponent and fits int64, else a float.
  Status ReadNumber(Value* out) {
    const size_t start = at_;
    const auto digits = [&]() {
      const size_t from = at_;
      while (at_ < text_.size() && IsDigit(text_[at_])) ++at_;
      return at_ - from;
    };
    const bool negative = text_[at_] == '-';
    if (negative) ++at_;
    const size_t int_start = at_;
    const size_t int_digits = digits();
    if (int_digits == 0) return Error(start, "a number needs digits");
    if (int_digits > 1 && text_[int_start] == '0') return Error(start, "a leading zero");
    bool integer = true;
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      if (digits() == 0) return Error(at_, "a fraction needs digits");
      integer = false;
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      if (digits() == 0) return Error(at_, "an exponent needs digits");
      integer = false;
    }
    if (integer) {
      // Accumulated negatively: -9223372036854775808 fits.
      int64_t v = 0;
      bool fits = true;
      for (size_t i = int_start; i < at_ && fits; ++i) {
        const int d = text_[i] - '0';
        if (v < (INT64_MIN + d) / 10) {
          fits = false;
        } else {
          v = v * 10 - d;
        }
      }
      if (fits && (negative || v != INT64_MIN)) {
        *out = Value::Int(negative ? v : -v);
        return Status::Ok();
      }
    }
    // strtod reads a NUL-terminated copy: on the stack, or in scratch when long.
    const std::string_view number = text_.substr(start, at_ - start);
    char buf[64];
    const char* copy = buf;
    if (number.size() < sizeof(buf)) {
      memcpy(buf, number.data(), number.size());
      buf[number.size()] = '\0';
    } else {
      heap_->Begin();
      heap_->Append(number);
      heap_->AppendChar('\0');
      const Value v = heap_->End();
      if (heap_->full()) return HeapFull(*heap_);
      copy = v.s;
    }
    *out = Value::Float(strtod(copy, nullptr));
    return Status::Ok();
  }

  std::string_view text_;
  Heap* heap_;
  size_t at_ = 0;
};

}  // namespace

Status ParseJson(std::string_view text, Heap* heap, Value* out) {
  *out = Value::Undefined();
  return JsonReader(text, heap).Read(out);
}

}  // namespace ember::tmpl
