// Chat template methods (Python's str and dict ones) and functions (range,
// strftime_now), see template_ops.h.
#include <limits>

#include "runtime/chat/template_ops.h"
#include "runtime/chat/template_text.h"

namespace ember::tmpl {

Status CallMethod(Method id, const Value& object, const Value* args, uint32_t argc,
                  Heap* heap, Value* out) {
  const Value& a0 = Arg(args, argc, 0);
  const Value& a1 = Arg(args, argc, 1);
  if (id >= Method::kGet) {  // dict methods
    if (!object.is_mapping()) {
      return InvalidArgument("chat template: %s() of a value that is not a dict",
                             kMethods[static_cast<int>(id)].name);
    }
    if (id == Method::kGet) {
      EMBER_RETURN_IF_ERROR(NeedString(a0, "get"));
      *out = Lookup(object, a0.str());
      if (out->kind == Kind::kUndefined) *out = Given(a1) ? a1 : Value::None();
      return Status::Ok();
    }
    const uint32_t n = MappingSize(object);
    Value* items;
    *out = NewList(n, &items, heap);
    for (uint32_t i = 0; i < n && !heap->full(); ++i) {
      if (id == Method::kKeys) {
        items[i] = MappingKey(object, i);
      } else if (id == Method::kValues) {
        items[i] = MappingValue(object, i);
      } else {
        Value* pair;
        items[i] = NewList(2, &pair, heap);
        if (pair) {
          pair[0] = MappingKey(object, i);
          pair[1] = MappingValue(object, i);
        }
      }
    }
    return Done(*heap);
  }
  if (id == Method::kJoin) {
    EMBER_RETURN_IF_ERROR(NeedString(object, "join"));
    return ApplyFilter(Filter::kJoin, a0, &object, 1, heap, out);
  }
  EMBER_RETURN_IF_ERROR(NeedString(object, kMethods[static_cast<int>(id)].name));
  const std::string_view s = object.str();
  switch (id) {
    case Method::kStartsWith:
    case Method::kEndsWith: {
      Value prefixes = a0;
      if (a0.is_string()) {
        Value* one;
        prefixes = NewList(1, &one, heap);
        if (heap->full()) return HeapFull(*heap);
        one[0] = a0;
      }
      if (prefixes.kind != Kind::kList) return NeedString(a0, "startswith/endswith");
      *out = Value::Bool(false);
      for (uint32_t i = 0; i < prefixes.list->count; ++i) {
        const Value p = prefixes.list->at(i);
        EMBER_RETURN_IF_ERROR(NeedString(p, "startswith/endswith"));
        const bool hit =
            p.size <= s.size() &&
            (id == Method::kStartsWith ? s.substr(0, p.size) == p.str()
                                       : s.substr(s.size() - p.size) == p.str());
        if (hit) *out = Value::Bool(true);
      }
      return Status::Ok();
    }
    case Method::kStrip:
    case Method::kLStrip:
    case Method::kRStrip:
      *out = Value::String(Strip(s, a0, id != Method::kRStrip, id != Method::kLStrip));
      return Status::Ok();
    case Method::kSplit:
      if (a0.is_string() && a0.size == 0) {
        return InvalidArgument("chat template: split with an empty separator");
      }
      *out = Split(s, a0, IsInteger(a1) ? IntOf(a1) : -1, heap);
      return Done(*heap);
    case Method::kUpper:
    case Method::kLower:
    case Method::kTitle:
    case Method::kCapitalize: {
      const Filter f = id == Method::kUpper   ? Filter::kUpper
                       : id == Method::kLower ? Filter::kLower
                       : id == Method::kTitle ? Filter::kTitle
                                              : Filter::kCapitalize;
      return ApplyFilter(f, object, nullptr, 0, heap, out);
    }
    case Method::kReplace:
      return ApplyFilter(Filter::kReplace, object, args, argc, heap, out);
    case Method::kFind:
    case Method::kCount: {
      EMBER_RETURN_IF_ERROR(NeedString(a0, "find/count"));
      if (id == Method::kFind) {
        const size_t at = s.find(a0.str());
        *out = Value::Int(at == std::string_view::npos
                              ? -1
                              : static_cast<int64_t>(CodePoints(s.substr(0, at))));
      } else {
        int64_t n = 0;
        if (a0.size == 0) {
          n = static_cast<int64_t>(CodePoints(s)) + 1;
        } else {
          for (size_t at = s.find(a0.str()); at != std::string_view::npos;
               at = s.find(a0.str(), at + a0.size)) {
            ++n;
          }
        }
        *out = Value::Int(n);
      }
      return Status::Ok();
    }
    default:
      break;
  }
  return InvalidArgument("chat template: unknown method");
}

Status CallFunction(Function id, const Value* args, uint32_t argc, Heap* heap,
                    Value* out) {
  if (id == Function::kStrftimeNow) {
    // A clock before 1970 is none (ChatTemplateOptions), whatever a program stored.
    if (argc != 2 || args[0].kind != Kind::kInt || args[0].i < 0) {
      return InvalidArgument(
          "chat template: 'strftime_now' is undefined (no clock given)");
    }
    EMBER_RETURN_IF_ERROR(NeedString(args[1], "strftime_now"));
    return Strftime(args[0].i, args[1].str(), heap, out);
  }
  if (id != Function::kRange) return InvalidArgument("chat template: unknown function");
  for (uint32_t i = 0; i < argc; ++i) {
    if (!IsInteger(args[i]))
      return InvalidArgument("chat template: range of a non-integer");
  }
  int64_t start = 0, stop = 0, step = 1;
  if (argc == 1) stop = IntOf(args[0]);
  if (argc >= 2) {
    start = IntOf(args[0]);
    stop = IntOf(args[1]);
  }
  if (argc == 3) step = IntOf(args[2]);
  if (argc == 0 || step == 0)
    return InvalidArgument("chat template: range needs a stop and a step != 0");
  // In unsigned arithmetic: stop - start overflows for range(-2**63, 2**62), and
  // so may start + i * step though every item fits.
  const uint64_t span =
      step > 0
          ? (stop > start ? static_cast<uint64_t>(stop) - static_cast<uint64_t>(start)
                          : 0)
          : (start > stop ? static_cast<uint64_t>(start) - static_cast<uint64_t>(stop)
                          : 0);
  const uint64_t stride =
      step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  const uint64_t count = span == 0 ? 0 : (span - 1) / stride + 1;
  if (count > (1 << 20))
    return InvalidArgument("chat template: range of %llu items",
                           static_cast<unsigned long long>(count));
  Value* items;
  *out = NewList(static_cast<uint32_t>(count), &items, heap);
  for (uint64_t i = 0; i < count && items; ++i) {
    // Modulo 2^64, then back to signed: the item lies between start and stop.
    const uint64_t offset = i * stride, from = static_cast<uint64_t>(start);
    const uint64_t u = step > 0 ? from + offset : from - offset;
    items[i] = Value::Int(u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                              ? static_cast<int64_t>(u)
                              : -static_cast<int64_t>(~u) - 1);
  }
  return Done(*heap);
}

}  // namespace ember::tmpl
