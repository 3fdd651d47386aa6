// Jinja lexer (see jinja_lexer.h).
#include "tools/template/jinja_lexer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace ember::tools::jinja {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Appends code point `cp` as UTF-8.
void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(const std::string& source) : src_(source) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  Status Run(std::vector<Token>* tokens) {
    out_ = tokens;
    size_t pos = 0;
    bool strip_next = false;  // a "-" closed the last tag: strip leading whitespace
    while (pos <= src_.size()) {
      size_t open = FindTag(pos);
      std::string text = src_.substr(pos, open - pos);
      if (strip_next) {
        size_t i = 0;
        while (i < text.size() && IsSpace(text[i])) ++i;
        text.erase(0, i);
      }
      if (open == src_.size()) {
        Emit(TokenKind::kText, text, pos);
        break;
      }
      const char kind = src_[open + 1];  // '{', '%' or '#'
      const char marker = open + 2 < src_.size() ? src_[open + 2] : '\0';
      if (marker == '-') {
        size_t n = text.size();
        while (n > 0 && IsSpace(text[n - 1])) --n;
        text.resize(n);
      } else if (kind != '{' && marker != '+') {
        // lstrip_blocks: spaces and tabs from the start of the line to the tag.
        size_t i = open;
        while (i > pos && (src_[i - 1] == ' ' || src_[i - 1] == '\t')) --i;
        if (i == 0 || src_[i - 1] == '\n') {
          text.resize(text.size() - std::min(open - i, text.size()));
        }
      }
      Emit(TokenKind::kText, text, pos);
      const size_t body = open + 2 + (marker == '-' || marker == '+' ? 1 : 0);
      size_t end = 0;
      if (kind == '#') {
        const size_t close = src_.find("#}", body);
        if (close == std::string::npos) return Error(open, "unclosed comment");
        strip_next = close > body && src_[close - 1] == '-';
        end = close + 2;
        if (!strip_next) end = TrimBlock(end, close > body && src_[close - 1] == '+');
      } else {
        Emit(kind == '{' ? TokenKind::kOutputOpen : TokenKind::kStmtOpen, "", open);
        EMBER_RETURN_IF_ERROR(LexTag(body, kind == '{' ? '}' : '%', &end, &strip_next));
        if (kind == '%' && !strip_next) {
          end = TrimBlock(end, src_[end - 3] == '+');
        }
      }
      pos = end;
    }
    Emit(TokenKind::kEnd, "", src_.size());
    return Status::Ok();
  }

 private:
  // The next "{{", "{%" or "{#" at or after pos, or the end.
  size_t FindTag(size_t pos) const {
    for (size_t i = pos; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' &&
          (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
        return i;
      }
    }
    return src_.size();
  }

  // trim_blocks: the first newline after a block or comment tag is dropped.
  size_t TrimBlock(size_t end, bool plus) const {
    if (!plus && end < src_.size() && src_[end] == '\n') return end + 1;
    return end;
  }

  void Emit(TokenKind kind, std::string value, size_t at) {
    if (kind == TokenKind::kText && value.empty()) return;
    Token t;
    t.kind = kind;
    t.value = std::move(value);
    Where(at, &t.line, &t.column);
    out_->push_back(std::move(t));
  }

  void Where(size_t at, int* line, int* column) const {
    size_t lo = 0, hi = line_starts_.size();  // the last line start <= at
    while (hi - lo > 1) {
      const size_t mid = (lo + hi) / 2;
      (line_starts_[mid] <= at ? lo : hi) = mid;
    }
    *line = static_cast<int>(lo + 1);
    *column = static_cast<int>(at - line_starts_[lo] + 1);
  }

  Status Error(size_t at, const char* what) const {
    int line, column;
    Where(at, &line, &column);
    return InvalidArgument("chat template line %d, column %d: %s", line, column, what);
  }

  // The tokens of a tag's body from `pos` to its close ("}}" or "%}", optionally after
  // "-" or "+"), outside brackets and strings. *end: past the close.
  Status LexTag(size_t pos, char close, size_t* end, bool* strip_next) {
    int depth = 0;
    while (true) {
      while (pos < src_.size() && IsSpace(src_[pos])) ++pos;
      if (pos >= src_.size()) return Error(pos, "unclosed tag");
      const char c = src_[pos];
      if (depth == 0) {
        for (const char* marker : {"-", "+", ""}) {
          const size_t m = strlen(marker);
          if (src_.compare(pos, m, marker) == 0 && pos + m + 1 < src_.size() &&
              src_[pos + m] == close && src_[pos + m + 1] == '}' &&
              !(close == '}' && m == 1 && marker[0] == '+')) {
            *strip_next = m == 1 && marker[0] == '-';
            Emit(close == '}' ? TokenKind::kOutputClose : TokenKind::kStmtClose, "", pos);
            *end = pos + m + 2;
            return Status::Ok();
          }
        }
      }
      if (c == '\'' || c == '"') {
        EMBER_RETURN_IF_ERROR(LexString(&pos));
      } else if (IsDigit(c)) {
        LexNumber(&pos);
      } else if (IsNameStart(c)) {
        const size_t start = pos;
        while (pos < src_.size() && (IsNameStart(src_[pos]) || IsDigit(src_[pos]))) ++pos;
        Emit(TokenKind::kName, src_.substr(start, pos - start), start);
      } else {
        static const char* const kOps[] = {
            "**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<",
            ">",  "=",  "(",  ")",  "[",  "]",  "{", "}", ",", ".", ":", "|"};
        const char* op = nullptr;
        for (const char* o : kOps) {
          if (src_.compare(pos, strlen(o), o) == 0) {
            op = o;
            break;
          }
        }
        if (!op) return Error(pos, "unexpected character in a tag");
        if (op[0] == '(' || op[0] == '[' || op[0] == '{') ++depth;
        if ((op[0] == ')' || op[0] == ']' || op[0] == '}') && depth > 0) --depth;
        Emit(TokenKind::kOperator, op, pos);
        pos += strlen(op);
      }
    }
  }

  // A Python string literal, its escapes resolved (unknown ones kept as written).
  Status LexString(size_t* pos) {
    const size_t start = *pos;
    const char quote = src_[(*pos)++];
    std::string value;
    while (true) {
      if (*pos >= src_.size()) return Error(start, "unclosed string");
      const char c = src_[(*pos)++];
      if (c == quote) break;
      if (c != '\\') {
        value.push_back(c);
        continue;
      }
      if (*pos >= src_.size()) return Error(start, "unclosed string");
      const char e = src_[(*pos)++];
      const char* simple = strchr("nrtvfab\\'\"\n", e);
      if (simple && e != '\0') {
        static const char kFrom[] = "nrtvfab\\'\"";
        static const char kTo[] = "\n\r\t\v\f\a\b\\'\"";
        if (e == '\n') continue;  // a line continuation
        value.push_back(kTo[strchr(kFrom, e) - kFrom]);
      } else if (e == 'x' || e == 'u' || e == 'U') {
        const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t i = 0; i < digits; ++i) {
          const int d = *pos + i < src_.size() ? HexDigit(src_[*pos + i]) : -1;
          if (d < 0) return Error(*pos, "bad \\x, \\u or \\U escape in a string");
          cp = cp * 16 + static_cast<uint32_t>(d);
        }
        if (cp > 0x10FFFF) return Error(*pos, "escape past U+10FFFF");
        *pos += digits;
        AppendUtf8(cp, &value);
      } else if (e >= '0' && e <= '7') {
        uint32_t cp = static_cast<uint32_t>(e - '0');
        for (int i = 0;
             i < 2 && *pos < src_.size() && src_[*pos] >= '0' && src_[*pos] <= '7'; ++i) {
          cp = cp * 8 + static_cast<uint32_t>(src_[(*pos)++] - '0');
        }
        AppendUtf8(cp, &value);
      } else {
        value.push_back('\\');
        value.push_back(e);
      }
    }
    Emit(TokenKind::kString, std::move(value), start);
    return Status::Ok();
  }

  void LexNumber(size_t* pos) {
    const size_t start = *pos;
    bool is_float = false;
    while (*pos < src_.size() && (IsDigit(src_[*pos]) || src_[*pos] == '_')) ++*pos;
    if (*pos + 1 < src_.size() && src_[*pos] == '.' && IsDigit(src_[*pos + 1])) {
      is_float = true;
      ++*pos;
      while (*pos < src_.size() && (IsDigit(src_[*pos]) || src_[*pos] == '_')) ++*pos;
    }
    if (*pos < src_.size() && (src_[*pos] == 'e' || src_[*pos] == 'E')) {
      size_t e = *pos + 1;
      if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
      if (e < src_.size() && IsDigit(src_[e])) {
        is_float = true;
        *pos = e;
        while (*pos < src_.size() && IsDigit(src_[*pos])) ++*pos;
      }
    }
    std::string digits;
    for (size_t i = start; i < *pos; ++i) {
      if (src_[i] != '_') digits.push_back(src_[i]);
    }
    Token t;
    t.kind = is_float ? TokenKind::kFloat : TokenKind::kInt;
    t.value = digits;
    t.float_value = strtod(digits.c_str(), nullptr);
    t.int_value = is_float ? 0 : strtoll(digits.c_str(), nullptr, 10);
    Where(start, &t.line, &t.column);
    out_->push_back(std::move(t));
  }

  const std::string& src_;
  std::vector<size_t> line_starts_;
  std::vector<Token>* out_ = nullptr;
};

}  // namespace

Status Tokenize(const std::string& source, std::vector<Token>* tokens) {
  // As Jinja2 reads a template: newlines normalized to "\n", one trailing newline
  // dropped (keep_trailing_newline is off).
  std::string normalized;
  normalized.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      normalized.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      normalized.push_back(source[i]);
    }
  }
  if (!normalized.empty() && normalized.back() == '\n') normalized.pop_back();
  tokens->clear();
  return Lexer(normalized).Run(tokens);
}

}  // namespace ember::tools::jinja
