// What the chat template machine does to values: operators, attributes, subscripts,
// slices, and the builtin filters, tests, methods and functions, with Python's rules.
// Each returns an error for what Jinja would refuse (adding a string to a number, a
// subscript out of range) and ResourceExhausted when the heap is full.
#ifndef EMBER_RUNTIME_CHAT_TEMPLATE_OPS_H_
#define EMBER_RUNTIME_CHAT_TEMPLATE_OPS_H_

#include <cstdint>

#include "runtime/chat/chat_template_format.h"
#include "runtime/chat/template_value.h"
#include "runtime/status.h"

namespace ember::tmpl {

Status ApplyUnary(UnaryOp op, const Value& v, Value* out);
Status ApplyBinary(BinaryOp op, const Value& a, const Value& b, Heap* heap, Value* out);
// a.name (a mapping's key; nothing else has attributes a template may read).
Status GetAttr(const Value& object, std::string_view name, Value* out);
// a[key]: list or string index (negative from the end), or a mapping's key.
Status GetItem(const Value& object, const Value& key, Heap* heap, Value* out);
// a[start:stop:step] of a list or a string (each bound may be undefined: absent).
Status Slice(const Value& object, const Value& start, const Value& stop,
             const Value& step, Heap* heap, Value* out);
// `needle in haystack`.
Status Contains(const Value& haystack, const Value& needle, bool* out);
// The list a loop or a filter walks: a list itself, a mapping's keys, a string's
// characters.
Status Iterable(const Value& v, Heap* heap, Value* out);

Status ApplyFilter(Filter id, const Value& value, const Value* args, uint32_t argc,
                   Heap* heap, Value* out);
Status ApplyTest(Test id, const Value& value, const Value* args, uint32_t argc,
                 bool* out);
// A test by name at run time (selectattr's, select's argument).
Status ApplyTestByName(std::string_view name, const Value& value, const Value* args,
                       uint32_t argc, bool* out);
Status CallMethod(Method id, const Value& object, const Value* args, uint32_t argc,
                  Heap* heap, Value* out);
Status CallFunction(Function id, const Value* args, uint32_t argc, Heap* heap,
                    Value* out);

// A new list of n values in the heap (values to fill; null when full).
Value NewList(uint32_t n, Value** values, Heap* heap);
// A new dict with room for `capacity` keys (kind kDict or kNamespace).
Value NewDict(uint32_t capacity, Kind kind, Heap* heap);
// Sets key to value in a dict (growing it in the heap when full).
Status SetKey(Dict* dict, const Value& key, const Value& value, Heap* heap);

// The error for a full heap.
Status HeapFull(const Heap& heap);

}  // namespace ember::tmpl

#endif  // EMBER_RUNTIME_CHAT_TEMPLATE_OPS_H_
