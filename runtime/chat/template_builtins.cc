// Chat template filters and tests (see template_ops.h), as Jinja2 has them.
#include "runtime/chat/template_numbers.h"
#include "runtime/chat/template_ops.h"
#include "runtime/chat/template_text.h"

namespace ember::tmpl {
namespace {

// selectattr / rejectattr / select / reject: the items whose (attribute's) test result
// is `keep`.
Status SelectItems(const Value& value, const Value* attr, const Value& test,
                   const Value& test_arg, bool keep, Heap* heap, Value* out) {
  Value items;
  EMBER_RETURN_IF_ERROR(Iterable(value, heap, &items));
  Value* kept;
  Value list = NewList(items.list->count, &kept, heap);
  if (heap->full()) return HeapFull(*heap);
  uint32_t n = 0;
  for (uint32_t i = 0; i < items.list->count; ++i) {
    const Value item = items.list->at(i);
    Value subject = item;
    if (attr) EMBER_RETURN_IF_ERROR(GetAttr(item, attr->str(), &subject));
    bool pass;
    if (Given(test)) {
      EMBER_RETURN_IF_ERROR(NeedString(test, "the test of select/selectattr"));
      EMBER_RETURN_IF_ERROR(ApplyTestByName(test.str(), subject, &test_arg,
                                            Given(test_arg) ? 1 : 0, &pass));
    } else {
      pass = Truthy(subject);
    }
    if (pass == keep) kept[n++] = item;
  }
  const_cast<List*>(list.list)->count = n;
  *out = list;
  return Status::Ok();
}

}  // namespace

Status ApplyFilter(Filter id, const Value& value, const Value* args, uint32_t argc,
                   Heap* heap, Value* out) {
  const Value& a0 = Arg(args, argc, 0);
  const Value& a1 = Arg(args, argc, 1);
  const Value& a2 = Arg(args, argc, 2);
  switch (id) {
    case Filter::kTrim: {
      // Jinja2's trim is str(value).strip(chars): None trims to "None".
      Value text = value;
      if (!value.is_string()) {
        heap->Begin();
        AppendStr(value, heap);
        text = heap->End();
        if (heap->full()) return HeapFull(*heap);
      }
      *out = Value::String(Strip(text.str(), a0, true, true));
      return Status::Ok();
    }
    case Filter::kLength:
    case Filter::kCount:
      *out = Value::Int(value.is_string() ? static_cast<int64_t>(CodePoints(value.str()))
                        : value.kind == Kind::kList ? value.list->count
                                                    : MappingSize(value));
      return Status::Ok();
    case Filter::kToJson: {
      if (Given(a2) || (Given(a1) && Truthy(a1)) || Truthy(Arg(args, argc, 3))) {
        return InvalidArgument("chat template: tojson supports indent only");
      }
      // json.dumps indents by ' ' * indent: a negative one is no spaces, still one item
      // a line. No buffer holds a line indented 2^40 (a terabyte), so wider ones are
      // clamped there, where indent * depth (depth <= 64) cannot overflow; AppendJson
      // stops at a full buffer.
      constexpr int64_t kWidest = int64_t{1} << 40;
      const int64_t wanted = IsInteger(a0) ? IntOf(a0) : -1;
      const int64_t indent = !IsInteger(a0) ? -1
                             : wanted < 0   ? 0
                                            : (wanted < kWidest ? wanted : kWidest);
      heap->Begin();
      const bool ok = AppendJson(value, indent, 0, heap);
      *out = heap->End();
      if (!ok)
        return InvalidArgument("chat template: tojson of a value JSON cannot hold");
      return Done(*heap);
    }
    case Filter::kString:
    case Filter::kSafe:
      if (value.is_string() || id == Filter::kSafe) {
        *out = value;
        return Status::Ok();
      }
      heap->Begin();
      AppendStr(value, heap);
      *out = heap->End();
      return Done(*heap);
    case Filter::kUpper:
    case Filter::kLower:
    case Filter::kCapitalize:
    case Filter::kTitle:
      EMBER_RETURN_IF_ERROR(NeedString(value, "upper, lower, capitalize and title"));
      *out = ChangeCase(value.str(),
                        id == Filter::kUpper   ? Case::kUpper
                        : id == Filter::kLower ? Case::kLower
                        : id == Filter::kTitle ? Case::kTitle
                                               : Case::kCapitalize,
                        heap);
      return Done(*heap);
    case Filter::kFirst:
    case Filter::kLast: {
      Value items;
      EMBER_RETURN_IF_ERROR(Iterable(value, heap, &items));
      const uint32_t n = items.list->count;
      *out =
          n == 0 ? Value::Undefined() : items.list->at(id == Filter::kFirst ? 0 : n - 1);
      return Status::Ok();
    }
    case Filter::kJoin: {
      Value items;
      EMBER_RETURN_IF_ERROR(Iterable(value, heap, &items));
      heap->Begin();
      for (uint32_t i = 0; i < items.list->count; ++i) {
        if (i && a0.is_string()) heap->Append(a0.str());
        Value item = items.list->at(i);
        if (a1.is_string()) EMBER_RETURN_IF_ERROR(GetAttr(item, a1.str(), &item));
        AppendStr(item, heap);
      }
      *out = heap->End();
      return Done(*heap);
    }
    case Filter::kDefault:
      *out = value.kind == Kind::kUndefined || (Truthy(a1) && !Truthy(value))
                 ? (Given(a0) ? a0 : Value::String(""))
                 : value;
      return Status::Ok();
    case Filter::kList:
      return Iterable(value, heap, out);
    case Filter::kReverse:
      if (value.is_string()) {
        return Slice(value, Value(), Value(), Value::Int(-1), heap, out);
      }
      EMBER_RETURN_IF_ERROR(Iterable(value, heap, out));
      return Slice(*out, Value(), Value(), Value::Int(-1), heap, out);
    case Filter::kSelectAttr:
    case Filter::kRejectAttr:
      EMBER_RETURN_IF_ERROR(NeedString(a0, "selectattr's attribute"));
      return SelectItems(value, &a0, a1, a2, id == Filter::kSelectAttr, heap, out);
    case Filter::kSelect:
    case Filter::kReject:
      return SelectItems(value, nullptr, a0, a1, id == Filter::kSelect, heap, out);
    case Filter::kMapAttribute: {
      EMBER_RETURN_IF_ERROR(NeedString(a0, "map(attribute=...)"));
      Value items;
      EMBER_RETURN_IF_ERROR(Iterable(value, heap, &items));
      Value* mapped;
      *out = NewList(items.list->count, &mapped, heap);
      if (heap->full()) return HeapFull(*heap);
      for (uint32_t i = 0; i < items.list->count; ++i) {
        EMBER_RETURN_IF_ERROR(GetAttr(items.list->at(i), a0.str(), &mapped[i]));
        if (mapped[i].kind == Kind::kUndefined && Given(a1)) mapped[i] = a1;
      }
      return Status::Ok();
    }
    case Filter::kReplace:
      EMBER_RETURN_IF_ERROR(NeedString(value, "replace"));
      EMBER_RETURN_IF_ERROR(NeedString(a0, "replace's old"));
      EMBER_RETURN_IF_ERROR(NeedString(a1, "replace's new"));
      *out =
          Replace(value.str(), a0.str(), a1.str(), IsInteger(a2) ? IntOf(a2) : -1, heap);
      return Done(*heap);
    case Filter::kInt:
      return IntFilter(value, a0, out);
    case Filter::kFloat:
      return FloatFilter(value, a0, out);
    case Filter::kAbs:
      if (!value.is_number())
        return InvalidArgument("chat template: abs of a non-number");
      return Abs(value, out);
    case Filter::kItems:
      return CallMethod(Method::kItems, value, nullptr, 0, heap, out);
    case Filter::kNumFilters:
      break;
  }
  return InvalidArgument("chat template: unknown filter");
}

Status ApplyTestByName(std::string_view name, const Value& value, const Value* args,
                       uint32_t argc, bool* out) {
  static const struct {
    const char* alias;
    Test test;
  } kAliases[] = {{"==", Test::kEqualTo},
                  {"eq", Test::kEqualTo},
                  {"!=", Test::kNotEqualTo},
                  {"<", Test::kLessThan},
                  {">", Test::kGreaterThan}};
  for (const auto& a : kAliases) {
    if (name == a.alias) return ApplyTest(a.test, value, args, argc, out);
  }
  for (uint32_t i = 0; i < static_cast<uint32_t>(Test::kNumTests); ++i) {
    if (name == kTests[i].name)
      return ApplyTest(static_cast<Test>(i), value, args, argc, out);
  }
  return InvalidArgument("chat template: no test named '%.*s'",
                         static_cast<int>(name.size()), name.data());
}

Status ApplyTest(Test id, const Value& v, const Value* args, uint32_t argc, bool* out) {
  const Value& a0 = Arg(args, argc, 0);
  switch (id) {
    case Test::kDefined:
      *out = v.kind != Kind::kUndefined;
      break;
    case Test::kUndefined:
      *out = v.kind == Kind::kUndefined;
      break;
    case Test::kNone:
      *out = v.kind == Kind::kNone;
      break;
    case Test::kString:
      *out = v.is_string();
      break;
    case Test::kNumber:
      *out = v.is_number();
      break;
    case Test::kInteger:
      *out = v.kind == Kind::kInt;
      break;
    case Test::kFloat:
      *out = v.kind == Kind::kFloat;
      break;
    case Test::kBoolean:
      *out = v.kind == Kind::kBool;
      break;
    case Test::kTrue:
      *out = v.kind == Kind::kBool && v.b;
      break;
    case Test::kFalse:
      *out = v.kind == Kind::kBool && !v.b;
      break;
    case Test::kMapping:
      *out = v.is_mapping();
      break;
    case Test::kIterable:
      *out = v.is_string() || v.kind == Kind::kList || v.is_mapping() ||
             v.kind == Kind::kUndefined;
      break;
    case Test::kSequence:
      *out = v.is_string() || v.kind == Kind::kList || v.is_mapping();
      break;
    case Test::kOdd:
    case Test::kEven:
    case Test::kDivisibleBy: {
      if (!IsInteger(v))
        return InvalidArgument("chat template: odd/even/divisibleby of a non-integer");
      const int64_t d = id == Test::kDivisibleBy ? (IsInteger(a0) ? IntOf(a0) : 0) : 2;
      if (d == 0) return InvalidArgument("chat template: divisibleby 0");
      const bool divisible = d == -1 || IntOf(v) % d == 0;  // INT64_MIN % -1 traps
      *out = id == Test::kOdd ? !divisible : divisible;
      break;
    }
    case Test::kEqualTo:
      *out = Equal(v, a0);
      break;
    case Test::kNotEqualTo:
      *out = !Equal(v, a0);
      break;
    case Test::kSameAs:
      *out = v.kind == a0.kind &&
             (v.kind == Kind::kNone || v.kind == Kind::kUndefined ||
              (v.kind == Kind::kBool && v.b == a0.b) ||
              ((v.kind == Kind::kList || v.is_mapping()) && v.dict == a0.dict));
      break;
    case Test::kLessThan:
    case Test::kGreaterThan: {
      Value r;
      Heap none(nullptr, 0);
      EMBER_RETURN_IF_ERROR(
          ApplyBinary(id == Test::kLessThan ? BinaryOp::kLess : BinaryOp::kGreater, v, a0,
                      &none, &r));
      *out = r.b;
      break;
    }
    case Test::kIn:
      return Contains(a0, v, out);
    case Test::kLower:
    case Test::kUpper: {
      if (!v.is_string())
        return InvalidArgument("chat template: lower/upper test of a non-string");
      bool cased = false, all = true;
      for (char c : v.str()) {
        const bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z';
        cased |= lower || upper;
        if (id == Test::kLower ? upper : lower) all = false;
      }
      *out = cased && all;
      break;
    }
    case Test::kNumTests:
      return InvalidArgument("chat template: unknown test");
  }
  return Status::Ok();
}

}  // namespace ember::tmpl
