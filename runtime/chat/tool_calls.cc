// Tool calls: see tool_calls.h.
#include "runtime/chat/tool_calls.h"

#include <cctype>
#include <cstdint>

namespace ember {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipSpace(std::string_view t, size_t i) {
  while (i < t.size() && IsSpace(t[i])) ++i;
  return i;
}

// The end of the JSON string whose quote is t[i]; npos when it is not one.
size_t SkipString(std::string_view t, size_t i) {
  if (i >= t.size() || t[i] != '"') return std::string_view::npos;
  for (++i; i < t.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(t[i]);
    if (c == '"') return i + 1;
    if (c < 0x20) return std::string_view::npos;
    if (c == '\\') {
      if (++i >= t.size()) return std::string_view::npos;
      const char e = t[i];
      if (e == 'u') {
        for (int k = 0; k < 4; ++k) {
          if (++i >= t.size() || !isxdigit(static_cast<unsigned char>(t[i]))) {
            return std::string_view::npos;
          }
        }
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return std::string_view::npos;
      }
    }
  }
  return std::string_view::npos;
}

// The end of a number or literal (true, false, null) at t[i]; npos when it is neither.
size_t SkipScalar(std::string_view t, size_t i) {
  for (const std::string_view word : {"true", "false", "null"}) {
    if (t.substr(i, word.size()) == word) return i + word.size();
  }
  const size_t start = i;
  while (i < t.size() && (isdigit(static_cast<unsigned char>(t[i])) || t[i] == '-' ||
                          t[i] == '+' || t[i] == '.' || t[i] == 'e' || t[i] == 'E')) {
    ++i;
  }
  return i > start ? i : std::string_view::npos;
}

// Where the value of the member whose key string is at t[i] starts (after the key, the
// ':' and white space), its key's contents in *key; npos when that is not there.
size_t SkipKey(std::string_view t, size_t i, std::string_view* key = nullptr) {
  const size_t key_end = SkipString(t, i);
  if (key_end == std::string_view::npos) return key_end;
  if (key) *key = t.substr(i + 1, key_end - i - 2);
  const size_t colon = SkipSpace(t, key_end);
  if (colon >= t.size() || t[colon] != ':') return std::string_view::npos;
  return SkipSpace(t, colon + 1);
}

Status NotJson(size_t at) {
  return InvalidArgument("tool call: not JSON at byte %zu of the reply", at);
}

// Calls fn(key, value_begin, value_end) for each member of the object at t[begin] (a
// '{'); *end is after its '}'.
template <class Fn>
Status ForEachMember(std::string_view t, size_t begin, size_t* end, Fn fn) {
  size_t i = SkipSpace(t, begin);
  if (i >= t.size() || t[i] != '{') return NotJson(i);
  i = SkipSpace(t, i + 1);
  if (i < t.size() && t[i] == '}') {
    *end = i + 1;
    return Status::Ok();
  }
  while (true) {
    std::string_view key;
    const size_t value = SkipKey(t, i, &key);
    if (value == std::string_view::npos) return NotJson(i);
    size_t value_end;
    EMBER_RETURN_IF_ERROR(SkipJsonValue(t, value, &value_end));
    fn(key, value, value_end);
    i = SkipSpace(t, value_end);
    if (i < t.size() && t[i] == '}') {
      *end = i + 1;
      return Status::Ok();
    }
    if (i >= t.size() || t[i] != ',') return NotJson(i);
    i = SkipSpace(t, i + 1);
  }
}

// One call object at t[begin]: its "name" and its arguments (`key`, or "arguments").
Status ParseCall(std::string_view t, size_t begin, std::string_view key, ToolCall* call,
                 size_t* end) {
  bool named = false, bad_arguments = false;
  *call = ToolCall{{}, "{}"};
  EMBER_RETURN_IF_ERROR(ForEachMember(t, begin, end, [&](std::string_view k, size_t b,
                                                         size_t e) {
    if (k == "name" && t[b] == '"') {
      call->name = t.substr(b + 1, e - b - 2);
      named = true;
    } else if (k == key || k == "arguments") {
      call->arguments = t.substr(b, e - b);
      bad_arguments = t[b] != '{';
    }
  }));
  if (!named || call->name.empty()) {
    return InvalidArgument("tool call at byte %zu of the reply: no \"name\" string",
                           SkipSpace(t, begin));
  }
  if (bad_arguments) {
    return InvalidArgument("tool call at byte %zu of the reply: \"%.*s\" is not an object",
                           SkipSpace(t, begin), static_cast<int>(key.size()), key.data());
  }
  return Status::Ok();
}

Status Add(const ToolCall& call, ToolCall* calls, size_t max_calls, size_t* n) {
  if (*n >= max_calls) {
    return ResourceExhausted("the reply makes more than %zu tool calls", max_calls);
  }
  calls[(*n)++] = call;
  return Status::Ok();
}

// Calls from t[i] on: a JSON array of call objects (`list`), or call objects separated
// by `separator`; *end is after the last. A separator at the very end (Llama 3's
// trailing ';') is taken.
Status ParseCallRun(std::string_view t, size_t i, bool list, char separator,
                    std::string_view key, ToolCall* calls, size_t max_calls, size_t* n,
                    size_t* end) {
  if (list) i = SkipSpace(t, i + 1);
  while (true) {
    ToolCall call;
    size_t call_end;
    EMBER_RETURN_IF_ERROR(ParseCall(t, i, key, &call, &call_end));
    EMBER_RETURN_IF_ERROR(Add(call, calls, max_calls, n));
    i = SkipSpace(t, call_end);
    if (i < t.size() && t[i] == separator) {
      i = SkipSpace(t, i + 1);
      if (!list && i == t.size()) break;
      continue;
    }
    if (list) {
      if (i >= t.size() || t[i] != ']') return NotJson(i);
      ++i;
    }
    break;
  }
  *end = i;
  return Status::Ok();
}

// Llama 3 (one object, or several separated by ';') and Mistral (an array of objects):
// a reply that does not start like calls is content.
Status ParseBare(std::string_view t, bool list, std::string_view key, ToolCall* calls,
                 size_t max_calls, size_t* n, std::string_view* content) {
  size_t i = SkipSpace(t, 0);
  *content = t;
  if (i >= t.size() || t[i] != (list ? '[' : '{')) return Status::Ok();
  EMBER_RETURN_IF_ERROR(
      ParseCallRun(t, i, list, list ? ',' : ';', key, calls, max_calls, n, &i));
  i = SkipSpace(t, i);
  if (i != t.size()) {
    return InvalidArgument("tool call: text after the calls at byte %zu of the reply", i);
  }
  *content = {};
  return Status::Ok();
}

// Calls between an open and a close tag (the close left out at the end of the reply, when
// a stop id ended it): one call object each (Hermes), or a run of them (Phi-4-mini: an
// array, or objects separated by commas as the model sometimes writes them). The
// content is the text before the first.
Status ParseTagged(std::string_view t, std::string_view open, std::string_view close,
                   bool runs, ToolCall* calls, size_t max_calls, size_t* n,
                   std::string_view* content) {
  size_t at = t.find(open);
  *content = t.substr(0, at);
  while (at != std::string_view::npos) {
    size_t end;
    if (runs) {
      const size_t i = SkipSpace(t, at + open.size());
      const bool list = i < t.size() && t[i] == '[';
      EMBER_RETURN_IF_ERROR(
          ParseCallRun(t, i, list, ',', "arguments", calls, max_calls, n, &end));
    } else {
      ToolCall call;
      EMBER_RETURN_IF_ERROR(ParseCall(t, at + open.size(), "arguments", &call, &end));
      EMBER_RETURN_IF_ERROR(Add(call, calls, max_calls, n));
    }
    end = SkipSpace(t, end);
    if (t.substr(end, close.size()) != close) {
      if (end == t.size()) break;  // the reply ended (a stop id) before the close tag
      return InvalidArgument("tool call: no %.*s at byte %zu of the reply",
                             static_cast<int>(close.size()), close.data(), end);
    }
    at = t.find(open, end + close.size());
  }
  return Status::Ok();
}

}  // namespace

const char* ToolCallFormatName(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::kHermes:
      return "hermes (<tool_call> tags)";
    case ToolCallFormat::kLlama3:
      return "llama3 (a JSON object)";
    case ToolCallFormat::kMistral:
      return "mistral ([TOOL_CALLS] and a JSON array)";
    case ToolCallFormat::kPhi4Mini:
      return "phi4-mini (<|tool_call|> and a JSON array)";
    case ToolCallFormat::kNone:
      break;
  }
  return "none";
}

ToolCallFormat DetectToolCallFormat(const ChatProgramTables& program) {
  const std::string_view strings(reinterpret_cast<const char*>(program.string_bytes),
                                 program.string_bytes_size);
  const auto has = [&](std::string_view s) {
    return strings.find(s) != std::string_view::npos;
  };
  if (has("<tool_call>")) return ToolCallFormat::kHermes;
  if (has("[TOOL_CALLS]")) return ToolCallFormat::kMistral;
  if (has("<|tool|>")) return ToolCallFormat::kPhi4Mini;
  if (has("\"parameters\"") || has("<|python_tag|>")) return ToolCallFormat::kLlama3;
  return ToolCallFormat::kNone;
}

ToolCallSyntax SyntaxOf(ToolCallFormat format) {
  ToolCallSyntax s;
  switch (format) {
    case ToolCallFormat::kHermes:
      s.trigger = "<tool_call>";
      s.arguments_key = "arguments";
      break;
    case ToolCallFormat::kLlama3:
      s.trigger = "{";
      s.at_start = true;
      s.grammar_includes_trigger = true;
      s.arguments_key = "parameters";
      break;
    case ToolCallFormat::kMistral:
      s.trigger = "[TOOL_CALLS]";
      s.arguments_key = "arguments";
      s.list = true;
      break;
    case ToolCallFormat::kPhi4Mini:
      s.trigger = "<|tool_call|>";
      s.arguments_key = "arguments";
      s.list = true;
      break;
    case ToolCallFormat::kNone:
      break;
  }
  return s;
}

Status SkipJsonValue(std::string_view t, size_t begin, size_t* end) {
  // An explicit stack of open containers (bit set: object), no recursion.
  uint64_t objects = 0;
  int depth = 0;
  size_t i = SkipSpace(t, begin);
  while (true) {
    // A value at t[i].
    if (i >= t.size()) return NotJson(i);
    const char c = t[i];
    if (c == '{' || c == '[') {
      if (depth == kMaxToolCallDepth) {
        return InvalidArgument("tool call: JSON nested deeper than %d levels (kMaxToolCallDepth)",
                               kMaxToolCallDepth);
      }
      const bool object = c == '{';
      objects = (objects << 1) | (object ? 1 : 0);
      ++depth;
      i = SkipSpace(t, i + 1);
      if (i < t.size() && t[i] == (object ? '}' : ']')) {
        objects >>= 1;
        --depth;
        ++i;
      } else {
        if (object) {
          const size_t value = SkipKey(t, i);
          if (value == std::string_view::npos) return NotJson(i);
          i = value;
        }
        continue;  // the first element's value
      }
    } else {
      const size_t e = c == '"' ? SkipString(t, i) : SkipScalar(t, i);
      if (e == std::string_view::npos) return NotJson(i);
      i = e;
    }
    // After a value: close containers, or go on to the next element.
    while (true) {
      if (depth == 0) {
        *end = i;
        return Status::Ok();
      }
      i = SkipSpace(t, i);
      if (i >= t.size()) return NotJson(i);
      const bool object = objects & 1;
      if (t[i] == (object ? '}' : ']')) {
        objects >>= 1;
        --depth;
        ++i;
        continue;
      }
      if (t[i] != ',') return NotJson(i);
      i = SkipSpace(t, i + 1);
      if (object) {
        const size_t value = SkipKey(t, i);
        if (value == std::string_view::npos) return NotJson(i);
        i = value;
      }
      break;
    }
  }
}

Status ParseToolCalls(ToolCallFormat format, std::string_view reply, ToolCall* calls,
                      size_t max_calls, size_t* num_calls, std::string_view* content) {
  *num_calls = 0;
  *content = reply;
  switch (format) {
    case ToolCallFormat::kHermes:
      return ParseTagged(reply, "<tool_call>", "</tool_call>", false, calls, max_calls,
                         num_calls, content);
    case ToolCallFormat::kLlama3:
      return ParseBare(reply, false, "parameters", calls, max_calls, num_calls, content);
    case ToolCallFormat::kMistral:
      return ParseBare(reply, true, "arguments", calls, max_calls, num_calls, content);
    case ToolCallFormat::kPhi4Mini:
      return ParseTagged(reply, "<|tool_call|>", "<|/tool_call|>", true, calls, max_calls,
                         num_calls, content);
    case ToolCallFormat::kNone:
      break;
  }
  return Status::Ok();
}

}  // namespace ember
