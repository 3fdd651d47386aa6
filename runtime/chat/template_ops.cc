// Chat template operators, attributes, subscripts and slices (see template_ops.h).
#include "runtime/chat/template_ops.h"

#include <cmath>
#include <cstring>

namespace ember::tmpl {
namespace {

const char* KindName(const Value& v) {
  static const char* const kNames[] = {"undefined", "none", "bool", "int",       "float",
                                       "string",    "list", "dict", "namespace", "dict"};
  return kNames[static_cast<int>(v.kind)];
}

Status TypeError(const char* op, const Value& a, const Value& b) {
  return InvalidArgument("chat template: '%s' of %s and %s is not defined", op,
                         KindName(a), KindName(b));
}

bool IsInt(const Value& v) { return v.kind == Kind::kInt || v.kind == Kind::kBool; }
int64_t IntOf(const Value& v) { return v.kind == Kind::kInt ? v.i : v.b; }
double FloatOf(const Value& v) {
  return v.kind == Kind::kFloat ? v.f : static_cast<double>(IntOf(v));
}

// Python's slice bounds for a sequence of n: the first index, the step, and the count.
Status SliceBounds(int64_t n, const Value& start, const Value& stop, const Value& step,
                   int64_t* first, int64_t* stride, int64_t* count) {
  const auto absent = [](const Value& v) {
    return v.kind == Kind::kUndefined || v.kind == Kind::kNone;
  };
  for (const Value* v : {&start, &stop, &step}) {
    if (!absent(*v) && !IsInt(*v))
      return InvalidArgument("chat template: slice bounds must be integers");
  }
  const int64_t s = absent(step) ? 1 : IntOf(step);
  if (s == 0) return InvalidArgument("chat template: slice step cannot be zero");
  const int64_t lower = s > 0 ? 0 : -1, upper = s > 0 ? n : n - 1;
  const auto bound = [&](const Value& v, int64_t fallback) {
    if (absent(v)) return fallback;
    int64_t i = IntOf(v);
    if (i < 0) i += n;
    return i < lower ? lower : i > upper ? upper : i;
  };
  const int64_t a = bound(start, s > 0 ? lower : upper);
  const int64_t b = bound(stop, s > 0 ? upper : lower);
  *first = a;
  *stride = s;
  *count = s > 0 ? (b > a ? (b - a + s - 1) / s : 0) : (a > b ? (a - b - s - 1) / -s : 0);
  return Status::Ok();
}

Value ListView(const List& base, int64_t first, int64_t stride, int64_t count,
               Heap* heap) {
  List* l = heap->AllocateArray<List>(1);
  if (!l) return Value::Undefined();
  *l = base;
  l->start = base.start + first * base.step;
  l->step = base.step * stride;
  l->count = static_cast<uint32_t>(count);
  Value v;
  v.kind = Kind::kList;
  v.list = l;
  return v;
}

}  // namespace

Status HeapFull(const Heap& heap) {
  return ResourceExhausted(
      "chat template: the buffer of %zu bytes is too small for this conversation (a "
      "render needs its text and a few times that as scratch)",
      heap.capacity());
}

Value NewList(uint32_t n, Value** values, Heap* heap) {
  *values = heap->AllocateArray<Value>(n ? n : 1);
  List* l = heap->AllocateArray<List>(1);
  if (!*values || !l) return Value::Undefined();
  *l = List();
  l->values = *values;
  l->count = n;
  Value v;
  v.kind = Kind::kList;
  v.list = l;
  return v;
}

Value NewDict(uint32_t capacity, Kind kind, Heap* heap) {
  Dict* d = heap->AllocateArray<Dict>(1);
  Value* keys = heap->AllocateArray<Value>(capacity ? capacity : 1);
  Value* values = heap->AllocateArray<Value>(capacity ? capacity : 1);
  if (!d || !keys || !values) return Value::Undefined();
  *d = Dict{keys, values, 0, capacity ? capacity : 1};
  Value v;
  v.kind = kind;
  v.dict = d;
  return v;
}

Status SetKey(Dict* d, const Value& key, const Value& value, Heap* heap) {
  for (uint32_t i = 0; i < d->count; ++i) {
    if (Equal(d->keys[i], key)) {
      d->values[i] = value;
      return Status::Ok();
    }
  }
  if (d->count == d->capacity) {  // grow: a copy twice the size, further down the heap
    const uint32_t capacity = d->capacity * 2;
    Value* keys = heap->AllocateArray<Value>(capacity);
    Value* values = heap->AllocateArray<Value>(capacity);
    if (!keys || !values) return HeapFull(*heap);
    memcpy(static_cast<void*>(keys), d->keys, d->count * sizeof(Value));
    memcpy(static_cast<void*>(values), d->values, d->count * sizeof(Value));
    d->keys = keys;
    d->values = values;
    d->capacity = capacity;
  }
  d->keys[d->count] = key;
  d->values[d->count++] = value;
  return Status::Ok();
}

Status ApplyUnary(UnaryOp op, const Value& v, Value* out) {
  if (op == UnaryOp::kNot) {
    *out = Value::Bool(!Truthy(v));
    return Status::Ok();
  }
  if (v.kind == Kind::kFloat) {
    *out = Value::Float(op == UnaryOp::kNegate ? -v.f : v.f);
  } else if (IsInt(v)) {
    *out = Value::Int(op == UnaryOp::kNegate ? -IntOf(v) : IntOf(v));
  } else {
    return InvalidArgument("chat template: unary minus or plus of %s", KindName(v));
  }
  return Status::Ok();
}

Status ApplyBinary(BinaryOp op, const Value& a, const Value& b, Heap* heap, Value* out) {
  const bool numbers = a.is_number() && b.is_number();
  const bool ints = IsInt(a) && IsInt(b);
  switch (op) {
    case BinaryOp::kAdd:
      if (a.is_string() && b.is_string()) {
        heap->Begin();
        heap->Append(a.str());
        heap->Append(b.str());
        *out = heap->End();
        return heap->full() ? HeapFull(*heap) : Status::Ok();
      }
      if (a.kind == Kind::kList && b.kind == Kind::kList) {
        Value* items;
        *out = NewList(a.list->count + b.list->count, &items, heap);
        if (heap->full()) return HeapFull(*heap);
        for (uint32_t i = 0; i < a.list->count; ++i) items[i] = a.list->at(i);
        for (uint32_t i = 0; i < b.list->count; ++i)
          items[a.list->count + i] = b.list->at(i);
        return Status::Ok();
      }
      if (!numbers) return TypeError("+", a, b);
      *out =
          ints ? Value::Int(IntOf(a) + IntOf(b)) : Value::Float(FloatOf(a) + FloatOf(b));
      return Status::Ok();
    case BinaryOp::kSubtract:
      if (!numbers) return TypeError("-", a, b);
      *out =
          ints ? Value::Int(IntOf(a) - IntOf(b)) : Value::Float(FloatOf(a) - FloatOf(b));
      return Status::Ok();
    case BinaryOp::kMultiply:
      if ((a.is_string() && IsInt(b)) || (IsInt(a) && b.is_string())) {
        const Value& s = a.is_string() ? a : b;
        const int64_t n = IsInt(a) ? IntOf(a) : IntOf(b);
        if (n > 0 && s.size > 0 && static_cast<uint64_t>(n) > heap->capacity() / s.size) {
          return HeapFull(*heap);
        }
        heap->Begin();
        // An empty string is empty however many times (and "" * 2**62 is one step).
        for (int64_t i = 0; i < n && s.size > 0; ++i) heap->Append(s.str());
        *out = heap->End();
        return heap->full() ? HeapFull(*heap) : Status::Ok();
      }
      if (!numbers) return TypeError("*", a, b);
      *out =
          ints ? Value::Int(IntOf(a) * IntOf(b)) : Value::Float(FloatOf(a) * FloatOf(b));
      return Status::Ok();
    case BinaryOp::kDivide:
    case BinaryOp::kFloorDivide:
    case BinaryOp::kModulo: {
      if (!numbers) return TypeError(op == BinaryOp::kModulo ? "%" : "/", a, b);
      if (FloatOf(b) == 0.0) return InvalidArgument("chat template: division by zero");
      if (op == BinaryOp::kDivide) {
        *out = Value::Float(FloatOf(a) / FloatOf(b));
      } else if (ints) {
        const int64_t x = IntOf(a), y = IntOf(b);
        int64_t q = x / y, r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) {  // Python floors toward -infinity
          --q;
          r += y;
        }
        *out = Value::Int(op == BinaryOp::kFloorDivide ? q : r);
      } else {
        const double x = FloatOf(a), y = FloatOf(b);
        const double q = std::floor(x / y);
        *out = Value::Float(op == BinaryOp::kFloorDivide ? q : x - q * y);
      }
      return Status::Ok();
    }
    case BinaryOp::kPower:
      if (!numbers) return TypeError("**", a, b);
      if (ints && IntOf(b) >= 0) {
        int64_t r = 1;
        for (int64_t i = 0; i < IntOf(b) && i < 64; ++i) r *= IntOf(a);
        *out = Value::Int(r);
      } else {
        *out = Value::Float(std::pow(FloatOf(a), FloatOf(b)));
      }
      return Status::Ok();
    case BinaryOp::kConcat:
      heap->Begin();
      AppendStr(a, heap);
      AppendStr(b, heap);
      *out = heap->End();
      return heap->full() ? HeapFull(*heap) : Status::Ok();
    case BinaryOp::kEqual:
    case BinaryOp::kNotEqual:
      *out = Value::Bool(Equal(a, b) == (op == BinaryOp::kEqual));
      return Status::Ok();
    case BinaryOp::kLess:
    case BinaryOp::kLessEqual:
    case BinaryOp::kGreater:
    case BinaryOp::kGreaterEqual: {
      int order;
      if (numbers) {
        const double x = FloatOf(a), y = FloatOf(b);
        order = x < y ? -1 : x > y ? 1 : 0;
        if (ints) order = IntOf(a) < IntOf(b) ? -1 : IntOf(a) > IntOf(b) ? 1 : 0;
      } else if (a.is_string() && b.is_string()) {
        const int c = a.str().compare(b.str());
        order = c < 0 ? -1 : c > 0 ? 1 : 0;
      } else {
        return TypeError("<", a, b);
      }
      const bool r = op == BinaryOp::kLess        ? order < 0
                     : op == BinaryOp::kLessEqual ? order <= 0
                     : op == BinaryOp::kGreater   ? order > 0
                                                  : order >= 0;
      *out = Value::Bool(r);
      return Status::Ok();
    }
    case BinaryOp::kIn:
    case BinaryOp::kNotIn: {
      bool in;
      EMBER_RETURN_IF_ERROR(Contains(b, a, &in));
      *out = Value::Bool(in == (op == BinaryOp::kIn));
      return Status::Ok();
    }
    case BinaryOp::kNumOps:
      break;
  }
  return InvalidArgument("chat template: unknown operator");
}

Status GetAttr(const Value& object, std::string_view name, Value* out) {
  if (object.kind == Kind::kUndefined) {
    return InvalidArgument("chat template: attribute '%.*s' of an undefined value",
                           static_cast<int>(name.size()), name.data());
  }
  *out = object.is_mapping() ? Lookup(object, name) : Value::Undefined();
  return Status::Ok();
}

Status GetItem(const Value& object, const Value& key, Heap* heap, Value* out) {
  *out = Value::Undefined();  // Jinja: a missing key or index is undefined, not an error
  if (object.kind == Kind::kUndefined) {
    return InvalidArgument("chat template: subscript of an undefined value");
  }
  if (object.is_mapping()) {
    if (key.is_string()) *out = Lookup(object, key.str());
    return Status::Ok();
  }
  if (!IsInt(key)) return Status::Ok();
  int64_t i = IntOf(key);
  if (object.kind == Kind::kList) {
    if (i < 0) i += object.list->count;
    if (i >= 0 && i < object.list->count)
      *out = object.list->at(static_cast<uint32_t>(i));
    return Status::Ok();
  }
  if (object.is_string()) {
    const int64_t n = static_cast<int64_t>(CodePoints(object.str()));
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Status::Ok();
    const size_t from = CodePointOffset(object.str(), static_cast<size_t>(i));
    const size_t to = CodePointOffset(object.str(), static_cast<size_t>(i + 1));
    *out = Value::String(object.str().substr(from, to - from));
  }
  (void)heap;
  return Status::Ok();
}

Status Slice(const Value& object, const Value& start, const Value& stop,
             const Value& step, Heap* heap, Value* out) {
  int64_t first, stride, count;
  if (object.kind == Kind::kList) {
    EMBER_RETURN_IF_ERROR(
        SliceBounds(object.list->count, start, stop, step, &first, &stride, &count));
    *out = ListView(*object.list, first, stride, count, heap);
    return heap->full() ? HeapFull(*heap) : Status::Ok();
  }
  if (!object.is_string()) {
    return InvalidArgument("chat template: slice of %s", KindName(object));
  }
  const std::string_view s = object.str();
  const size_t n = CodePoints(s);
  EMBER_RETURN_IF_ERROR(
      SliceBounds(static_cast<int64_t>(n), start, stop, step, &first, &stride, &count));
  if (stride == 1) {  // a view of the same bytes
    const size_t from = CodePointOffset(s, static_cast<size_t>(first));
    const size_t to = CodePointOffset(s, static_cast<size_t>(first + count));
    *out = Value::String(s.substr(from, to - from));
    return Status::Ok();
  }
  heap->Begin();
  for (int64_t k = 0; k < count; ++k) {
    const size_t i = static_cast<size_t>(first + k * stride);
    const size_t from = CodePointOffset(s, i), to = CodePointOffset(s, i + 1);
    heap->Append(s.substr(from, to - from));
  }
  *out = heap->End();
  return heap->full() ? HeapFull(*heap) : Status::Ok();
}

Status Contains(const Value& haystack, const Value& needle, bool* out) {
  *out = false;
  if (haystack.is_string()) {
    if (!needle.is_string()) {
      return InvalidArgument("chat template: 'in <string>' needs a string on the left");
    }
    *out = haystack.str().find(needle.str()) != std::string_view::npos;
  } else if (haystack.kind == Kind::kList) {
    for (uint32_t i = 0; i < haystack.list->count && !*out; ++i) {
      *out = Equal(haystack.list->at(i), needle);
    }
  } else if (haystack.is_mapping()) {
    *out = needle.is_string() && Lookup(haystack, needle.str()).kind != Kind::kUndefined;
  } else if (haystack.kind != Kind::kUndefined) {
    return InvalidArgument("chat template: 'in' of %s", KindName(haystack));
  }
  return Status::Ok();
}

Status Iterable(const Value& v, Heap* heap, Value* out) {
  if (v.kind == Kind::kList) {
    *out = v;
    return Status::Ok();
  }
  Value* items;
  if (v.kind == Kind::kUndefined) {  // Jinja's undefined iterates as empty
    *out = NewList(0, &items, heap);
  } else if (v.is_mapping()) {
    const uint32_t n = MappingSize(v);
    *out = NewList(n, &items, heap);
    for (uint32_t i = 0; i < n && items; ++i) items[i] = MappingKey(v, i);
  } else if (v.is_string()) {
    const std::string_view s = v.str();
    const uint32_t n = static_cast<uint32_t>(CodePoints(s));
    *out = NewList(n, &items, heap);
    size_t from = 0;
    for (uint32_t i = 0; i < n && items; ++i) {
      const size_t to = CodePointOffset(s, i + 1);
      items[i] = Value::String(s.substr(from, to - from));
      from = to;
    }
  } else {
    return InvalidArgument("chat template: %s is not iterable", KindName(v));
  }
  return heap->full() ? HeapFull(*heap) : Status::Ok();
}

}  // namespace ember::tmpl
