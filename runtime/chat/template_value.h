// The values a chat template computes with (Python's, as Jinja2 has them: undefined,
// None, bools, ints, floats, strings, lists, dicts, namespaces, and the caller's
// messages), and the scratch memory they live in: one caller buffer, the rendered text
// growing from its front and everything else from its back. No heap.
#ifndef EMBER_RUNTIME_CHAT_TEMPLATE_VALUE_H_
#define EMBER_RUNTIME_CHAT_TEMPLATE_VALUE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/status.h"

namespace ember {

// One message of a conversation: role ("system", "user", "assistant", "tool", ...) and
// content.
struct ChatMessage {
  std::string_view role;
  std::string_view content;
  // Empty, or a JSON object whose keys join the message after role and content, as
  // OpenAI writes them (tool_calls, tool_call_id, name, ...); its "role" or "content"
  // replaces the field's ("content": null: None, as an assistant's tool call has).
  std::string_view extra_json = {};
};

namespace tmpl {

enum class Kind : uint8_t {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,
  kDict,
  kNamespace,  // a dict whose attributes `set ns.x = ...` may change
  kMessage,    // a ChatMessage, read as the dict {"role": ..., "content": ...}
};

struct List;
struct Dict;

struct Value {
  Kind kind = Kind::kUndefined;
  uint32_t size = 0;  // kString: bytes
  union {
    bool b;
    int64_t i;
    double f;
    const char* s;
    const List* list;
    Dict* dict;
    const ChatMessage* message;
  };
  // constexpr: a static Value is constant-initialized (no guard variable, whose
  // libstdc++ code would link the exception machinery into bare-metal images).
  constexpr Value() : i(0) {}

  static Value Undefined() { return Value(); }
  static Value None() {
    Value v;
    v.kind = Kind::kNone;
    return v;
  }
  static Value Bool(bool b) {
    Value v;
    v.kind = Kind::kBool;
    v.b = b;
    return v;
  }
  static Value Int(int64_t i) {
    Value v;
    v.kind = Kind::kInt;
    v.i = i;
    return v;
  }
  static Value Float(double f) {
    Value v;
    v.kind = Kind::kFloat;
    v.f = f;
    return v;
  }
  static Value String(std::string_view s) {
    Value v;
    v.kind = Kind::kString;
    v.s = s.data();
    v.size = static_cast<uint32_t>(s.size());
    return v;
  }
  std::string_view str() const { return {s, size}; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_number() const {
    return kind == Kind::kInt || kind == Kind::kFloat || kind == Kind::kBool;
  }
  bool is_mapping() const {
    return kind == Kind::kDict || kind == Kind::kNamespace || kind == Kind::kMessage;
  }
};

// A list: element i is values[start + i * step] (or messages[...], as kMessage values),
// so that slices, reversals and views of the caller's messages copy nothing.
struct List {
  const Value* values = nullptr;  // or null, with messages
  const ChatMessage* messages = nullptr;
  int64_t start = 0;
  int64_t step = 1;
  uint32_t count = 0;
  Value at(uint32_t i) const;
};

// A dict (insertion-ordered; a handful of keys: lookups are linear).
struct Dict {
  Value* keys = nullptr;
  Value* values = nullptr;
  uint32_t count = 0;
  uint32_t capacity = 0;
};

// The caller's buffer: text from the front, scratch allocations from the back.
class Heap {
 public:
  Heap(char* buffer, size_t capacity)
      : buffer_(buffer), capacity_(capacity), top_(capacity) {}
  // `bytes` of scratch aligned to 8, or null (and an error kept) when the buffer is full.
  void* Allocate(size_t bytes);
  template <class T>
  T* AllocateArray(size_t n) {
    return n > SIZE_MAX / sizeof(T) ? nullptr : static_cast<T*>(Allocate(n * sizeof(T)));
  }
  // Appends rendered text; false when it would run into the scratch.
  bool Write(std::string_view text);
  size_t text_bytes() const { return text_; }
  const char* text() const { return buffer_; }
  bool full() const { return full_; }
  size_t capacity() const { return capacity_; }
  size_t scratch_bytes() const { return capacity_ - top_; }

  // A string built piece by piece in scratch (concatenation, replace, repr, JSON...):
  // Begin, Append..., then End returns it (or a string value with full() set).
  void Begin();
  void Append(std::string_view piece);
  void AppendChar(char c) { Append(std::string_view(&c, 1)); }
  Value End();
  // Or: the string becomes rendered text (false when the buffer is full).
  bool EndAsText();

  // Where the scratch ends now; then Pop(mark, v) gives back v's bytes when v is a
  // string allocated since the mark and nothing after it (a value written out at once).
  size_t Mark() const { return top_; }
  void Pop(size_t mark, const Value& v);

 private:
  char* buffer_;
  size_t capacity_;
  size_t top_;       // scratch is [top_, capacity_)
  size_t text_ = 0;  // text is [0, text_)
  bool full_ = false;
  // An open string: it grows downward from `build_end_`, moved to its place by End.
  size_t build_start_ = 0, build_bytes_ = 0;
  bool building_ = false;
};

// Python's truth value.
bool Truthy(const Value& v);
// Python's ==, across numbers (1 == 1.0 == True), strings, lists and mappings.
bool Equal(const Value& a, const Value& b);
// Appends str(v) (Python's: None, True, 1.5, [1, 'a'], {'k': 'v'}; undefined is empty).
void AppendStr(const Value& v, Heap* heap);
// Appends json.dumps(v, ensure_ascii=False, indent=indent) (indent < 0: none), as
// Hugging Face's tojson filter writes it; false for a value JSON cannot hold.
bool AppendJson(const Value& v, int64_t indent, int depth, Heap* heap);
// Python's repr of a float ("0.30000000000000004", "1e+16", "2.0") into buf (32 bytes).
size_t FormatFloat(double f, char* buf);
// A mapping's value for a key (undefined when absent).
Value Lookup(const Value& mapping, std::string_view key);
// A mapping's number of keys and key i.
uint32_t MappingSize(const Value& mapping);
Value MappingKey(const Value& mapping, uint32_t i);
Value MappingValue(const Value& mapping, uint32_t i);

// The deepest nesting of arrays and objects ParseJson reads (it recurses once a level).
inline constexpr int kMaxJsonDepth = 64;
// JSON text (RFC 8259, strictly: UTF-8, no NaN, no comments) into values in the heap's
// scratch, as Python's json.loads reads it: objects become dicts (a repeated key keeps
// its first place and its last value), arrays lists, integers that fit int64 ints,
// other numbers floats. Strings without escapes point into `text`, which must outlive
// them. InvalidArgument naming the byte offset; ResourceExhausted when the heap is full.
Status ParseJson(std::string_view text, Heap* heap, Value* out);

// UTF-8 strings indexed by code point, as Python's are.
size_t CodePoints(std::string_view s);
// The byte offset of code point `index` (<= CodePoints(s)).
size_t CodePointOffset(std::string_view s, size_t index);

}  // namespace tmpl
}  // namespace ember

#endif  // EMBER_RUNTIME_CHAT_TEMPLATE_VALUE_H_
