// Text helpers the chat template builtins share (template_builtins.cc,
// template_methods.cc): Python's whitespace, stripping, case, replace, split and
// strftime over UTF-8, in the render's heap.
#ifndef EMBER_RUNTIME_CHAT_TEMPLATE_TEXT_H_
#define EMBER_RUNTIME_CHAT_TEMPLATE_TEXT_H_

#include <cstdint>
#include <string_view>

#include "runtime/chat/template_ops.h"
#include "runtime/chat/template_value.h"

namespace ember::tmpl {

bool IsSpaceCodePoint(uint32_t c);
// The code point starting at s[at] and its length (a malformed byte counts as itself).
uint32_t Decode(std::string_view s, size_t at, size_t* len);
// Python's strip/lstrip/rstrip: `chars` (a string) or whitespace when undefined.
std::string_view Strip(std::string_view s, const Value& chars, bool left, bool right);
enum class Case { kUpper, kLower, kTitle, kCapitalize };
Value ChangeCase(std::string_view s, Case mode, Heap* heap);
Value Replace(std::string_view s, std::string_view from, std::string_view to,
              int64_t count, Heap* heap);
// str.split(sep, maxsplit): sep undefined splits on runs of whitespace.
Value Split(std::string_view s, const Value& sep, int64_t max_split, Heap* heap);
// Python's strftime of a UTC time for the directives chat templates use (%d %m %Y %y
// %b %B %a %A %H %M %S %j %%); others are copied as written.
Status Strftime(int64_t seconds, std::string_view format, Heap* heap, Value* out);

inline bool IsInteger(const Value& v) {
  return v.kind == Kind::kInt || v.kind == Kind::kBool;
}
inline int64_t IntOf(const Value& v) { return v.kind == Kind::kInt ? v.i : v.b; }
// Argument i, or undefined past argc.
const Value& Arg(const Value* args, uint32_t argc, uint32_t i);
inline bool Given(const Value& v) { return v.kind != Kind::kUndefined; }
Status NeedString(const Value& v, const char* what);
inline Status Done(const Heap& heap) {
  return heap.full() ? HeapFull(heap) : Status::Ok();
}

}  // namespace ember::tmpl

#endif  // EMBER_RUNTIME_CHAT_TEMPLATE_TEXT_H_
