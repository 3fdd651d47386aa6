// Jinja compiler: expressions (see jinja_compiler.cc for statements and scopes).
#include <cstring>
#include <limits>

#include "tools/template/jinja_compiler_internal.h"

namespace ember::tools::jinja {

using tmpl::Op;

namespace {

struct Alias {
  const char* name;
  const char* canonical;
};

// Another name Jinja accepts for a filter or test.
const char* Canonical(const std::string& name, std::initializer_list<Alias> aliases) {
  for (const Alias& a : aliases) {
    if (name == a.name) return a.canonical;
  }
  return name.c_str();
}

template <size_t N>
int FindBuiltin(const tmpl::Builtin (&table)[N], const char* name) {
  for (size_t i = 0; i < N; ++i) {
    if (strcmp(table[i].name, name) == 0) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

Status Compiler::Expression(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kString:
      Emit(Op::kPushString, 1, {StringConstant(e.text)});
      return Status::Ok();
    case ExprKind::kInt:
      if (e.int_value > std::numeric_limits<int32_t>::max()) {
        return ErrorAt(e.where, "integer literal too large (32 bits at most)");
      }
      Emit(Op::kPushInt, 1, {static_cast<uint32_t>(static_cast<int32_t>(e.int_value))});
      return Status::Ok();
    case ExprKind::kFloat:
      Emit(Op::kPushFloat, 1, {FloatConstant(e.float_value)});
      return Status::Ok();
    case ExprKind::kConstant: {
      const tmpl::Constant c = e.text == "none"   ? tmpl::Constant::kNone
                               : e.text == "true" ? tmpl::Constant::kTrue
                                                  : tmpl::Constant::kFalse;
      Emit(Op::kPushConstant, 1, {static_cast<uint32_t>(c)});
      return Status::Ok();
    }
    case ExprKind::kName:
      return Name(e);
    case ExprKind::kAttr:
      return Attribute(e);
    case ExprKind::kItem:
      EMBER_RETURN_IF_ERROR(Expression(*e.children[0]));
      EMBER_RETURN_IF_ERROR(Expression(*e.children[1]));
      Emit(Op::kGetItem, -1);
      return Status::Ok();
    case ExprKind::kSlice: {
      EMBER_RETURN_IF_ERROR(Expression(*e.children[0]));
      uint32_t bits = 0;
      for (int i = 0; i < 3; ++i) {
        if (!e.children[1 + i]) continue;
        EMBER_RETURN_IF_ERROR(Expression(*e.children[1 + i]));
        bits |= 1u << i;
      }
      Emit(Op::kSlice, -static_cast<int>((bits & 1) + (bits >> 1 & 1) + (bits >> 2 & 1)),
           {bits});
      return Status::Ok();
    }
    case ExprKind::kUnary: {
      const Expr& operand = *e.children[0];
      if (e.text == "-" && operand.kind == ExprKind::kInt) {  // a negative literal
        Emit(Op::kPushInt, 1,
             {static_cast<uint32_t>(-static_cast<int32_t>(operand.int_value))});
        return Status::Ok();
      }
      EMBER_RETURN_IF_ERROR(Expression(operand));
      const tmpl::UnaryOp op = e.text == "not" ? tmpl::UnaryOp::kNot
                               : e.text == "-" ? tmpl::UnaryOp::kNegate
                                               : tmpl::UnaryOp::kPlus;
      Emit(Op::kUnary, 0, {static_cast<uint32_t>(op)});
      return Status::Ok();
    }
    case ExprKind::kBinary:
      return Binary(e);
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      // Python's: the first falsy (and) or truthy (or) operand, else the last.
      EMBER_RETURN_IF_ERROR(Expression(*e.children[0]));
      const size_t end = EmitJump(
          e.kind == ExprKind::kAnd ? Op::kJumpIfFalseElsePop : Op::kJumpIfTrueElsePop,
          -1);
      EMBER_RETURN_IF_ERROR(Expression(*e.children[1]));
      PatchHere(end);
      return Status::Ok();
    }
    case ExprKind::kCondition: {
      EMBER_RETURN_IF_ERROR(Expression(*e.children[1]));
      const size_t otherwise = EmitJump(Op::kJumpIfFalse, -1);
      EMBER_RETURN_IF_ERROR(Expression(*e.children[0]));
      const size_t end = EmitJump(Op::kJump, 0);
      PatchHere(otherwise);
      depth_ -= 1;  // the other branch starts without the first one's value
      if (e.children[2]) {
        EMBER_RETURN_IF_ERROR(Expression(*e.children[2]));
      } else {
        Emit(Op::kPushConstant, 1, {static_cast<uint32_t>(tmpl::Constant::kUndefined)});
      }
      PatchHere(end);
      return Status::Ok();
    }
    case ExprKind::kFilter:
      return Filter(e);
    case ExprKind::kTest:
      return TestExpr(e);
    case ExprKind::kCall:
      return Call(e);
    case ExprKind::kList:
      for (const ExprPtr& item : e.children) EMBER_RETURN_IF_ERROR(Expression(*item));
      Emit(Op::kBuildList, 1 - static_cast<int>(e.children.size()),
           {static_cast<uint32_t>(e.children.size())});
      return Status::Ok();
    case ExprKind::kDict:
      for (const ExprPtr& item : e.children) EMBER_RETURN_IF_ERROR(Expression(*item));
      Emit(Op::kBuildDict, 1 - static_cast<int>(e.children.size()),
           {static_cast<uint32_t>(e.children.size() / 2)});
      return Status::Ok();
  }
  return ErrorAt(e.where, "unknown expression");
}

Status Compiler::Name(const Expr& e) {
  if (e.text == "loop" && !loops_.empty()) {
    return ErrorAt(e.where,
                   "`loop` as a value is not supported (only loop.index, "
                   "loop.first, ...)");
  }
  Emit(Op::kLoad, 1, {Resolve(e.text)});
  return Status::Ok();
}

Status Compiler::Attribute(const Expr& e) {
  const Expr& object = *e.children[0];
  if (object.kind == ExprKind::kName && object.text == "loop" && !loops_.empty()) {
    if (filtering_) return ErrorAt(e.where, "`loop` in a for loop's \"if\" filter");
    static const char* const kNames[] = {"index",     "index0",   "revindex",
                                         "revindex0", "first",    "last",
                                         "length",    "previtem", "nextitem"};
    for (uint32_t i = 0; i < static_cast<uint32_t>(tmpl::LoopAttr::kNumAttrs); ++i) {
      if (e.text == kNames[i]) {
        Emit(Op::kLoopAttr, 1, {i});
        return Status::Ok();
      }
    }
    return ErrorAt(e.where, "loop." + e.text + " is not supported");
  }
  EMBER_RETURN_IF_ERROR(Expression(object));
  Emit(Op::kGetAttr, 0, {StringConstant(e.text)});
  return Status::Ok();
}

Status Compiler::Binary(const Expr& e) {
  static const struct {
    const char* text;
    tmpl::BinaryOp op;
  } kOps[] = {{"+", tmpl::BinaryOp::kAdd},          {"-", tmpl::BinaryOp::kSubtract},
              {"*", tmpl::BinaryOp::kMultiply},     {"/", tmpl::BinaryOp::kDivide},
              {"//", tmpl::BinaryOp::kFloorDivide}, {"%", tmpl::BinaryOp::kModulo},
              {"**", tmpl::BinaryOp::kPower},       {"~", tmpl::BinaryOp::kConcat},
              {"==", tmpl::BinaryOp::kEqual},       {"!=", tmpl::BinaryOp::kNotEqual},
              {"<", tmpl::BinaryOp::kLess},         {"<=", tmpl::BinaryOp::kLessEqual},
              {">", tmpl::BinaryOp::kGreater},      {">=", tmpl::BinaryOp::kGreaterEqual},
              {"in", tmpl::BinaryOp::kIn},          {"not in", tmpl::BinaryOp::kNotIn}};
  for (const auto& o : kOps) {
    if (e.text != o.text) continue;
    EMBER_RETURN_IF_ERROR(Expression(*e.children[0]));
    EMBER_RETURN_IF_ERROR(Expression(*e.children[1]));
    Emit(Op::kBinary, -1, {static_cast<uint32_t>(o.op)});
    return Status::Ok();
  }
  return ErrorAt(e.where, "operator '" + e.text + "' is not supported");
}

Status Compiler::Arguments(const Expr& call, size_t first_child,
                           const tmpl::Builtin& builtin, const char* kind,
                           uint32_t* argc) {
  std::vector<const Expr*> args(builtin.max_args, nullptr);
  const size_t positional = call.children.size() - first_child;
  if (positional > builtin.max_args) {
    return ErrorAt(call.where, std::string(kind) + " '" + builtin.name +
                                   "' takes at most " + std::to_string(builtin.max_args) +
                                   " arguments");
  }
  for (size_t i = 0; i < positional; ++i) args[i] = call.children[first_child + i].get();
  for (const auto& [name, value] : call.kwargs) {
    size_t i = 0;
    while (i < builtin.max_args && name != builtin.params[i]) ++i;
    if (i == builtin.max_args) {
      return ErrorAt(call.where, std::string(kind) + " '" + builtin.name +
                                     "' has no argument '" + name + "'");
    }
    if (args[i]) return ErrorAt(call.where, "argument '" + name + "' given twice");
    args[i] = value.get();
  }
  size_t n = args.size();
  while (n > 0 && !args[n - 1]) --n;
  for (size_t i = 0; i < n; ++i) {
    if (args[i]) {
      EMBER_RETURN_IF_ERROR(Expression(*args[i]));
    } else {
      Emit(Op::kPushConstant, 1, {static_cast<uint32_t>(tmpl::Constant::kUndefined)});
    }
  }
  *argc = static_cast<uint32_t>(n);
  return Status::Ok();
}

Status Compiler::Filter(const Expr& e) {
  const char* name = Canonical(e.text, {{"d", "default"}});
  const int id = FindBuiltin(tmpl::kFilters, name);
  if (id < 0) return ErrorAt(e.where, "filter '" + e.text + "' is not supported");
  if (id == static_cast<int>(tmpl::Filter::kMapAttribute) && e.children.size() > 1) {
    return ErrorAt(e.where,
                   "map with a filter name is not supported (map(attribute=...) is)");
  }
  EMBER_RETURN_IF_ERROR(Expression(*e.children[0]));
  uint32_t argc;
  EMBER_RETURN_IF_ERROR(Arguments(e, 1, tmpl::kFilters[id], "filter", &argc));
  Emit(Op::kFilter, -static_cast<int>(argc), {static_cast<uint32_t>(id), argc});
  return Status::Ok();
}

Status Compiler::TestExpr(const Expr& e) {
  const char* name = Canonical(e.text, {{"==", "equalto"},
                                        {"eq", "equalto"},
                                        {"!=", "ne"},
                                        {"<", "lt"},
                                        {"lessthan", "lt"},
                                        {">", "gt"},
                                        {"greaterthan", "gt"}});
  const int id = FindBuiltin(tmpl::kTests, name);
  if (id < 0) return ErrorAt(e.where, "test '" + e.text + "' is not supported");
  EMBER_RETURN_IF_ERROR(Expression(*e.children[0]));
  uint32_t argc;
  EMBER_RETURN_IF_ERROR(Arguments(e, 1, tmpl::kTests[id], "test", &argc));
  Emit(Op::kTest, -static_cast<int>(argc), {static_cast<uint32_t>(id), argc});
  if (e.negated) Emit(Op::kUnary, 0, {static_cast<uint32_t>(tmpl::UnaryOp::kNot)});
  return Status::Ok();
}

Status Compiler::Call(const Expr& e) {
  const Expr& callee = *e.children[0];
  const auto undefined = [&] {
    Emit(Op::kPushConstant, 1, {static_cast<uint32_t>(tmpl::Constant::kUndefined)});
  };
  if (callee.kind == ExprKind::kName) {
    const std::string& f = callee.text;
    if (f == "raise_exception") {
      if (e.children.size() != 2 || !e.kwargs.empty()) {
        return ErrorAt(e.where, "raise_exception takes one message");
      }
      EMBER_RETURN_IF_ERROR(Expression(*e.children[1]));
      Emit(Op::kRaise, -1);
      undefined();  // never reached: the render stops
      return Status::Ok();
    }
    if (f == "namespace" || f == "dict") {
      if (e.children.size() != 1) {
        return ErrorAt(e.where, f + "() takes keyword arguments only");
      }
      for (const auto& [name, value] : e.kwargs) {
        Emit(Op::kPushString, 1, {StringConstant(name)});
        EMBER_RETURN_IF_ERROR(Expression(*value));
      }
      const uint32_t n = static_cast<uint32_t>(e.kwargs.size());
      Emit(f == "namespace" ? Op::kNamespace : Op::kBuildDict,
           1 - 2 * static_cast<int>(n), {n});
      return Status::Ok();
    }
    if (f == "strftime_now") {
      if (e.children.size() != 2 || !e.kwargs.empty()) {
        return ErrorAt(e.where, "strftime_now takes one format");
      }
      Emit(Op::kLoad, 1, {tmpl::kSlotStrftimeNow});
      EMBER_RETURN_IF_ERROR(Expression(*e.children[1]));
      Emit(Op::kCall, -1, {static_cast<uint32_t>(tmpl::Function::kStrftimeNow), 2});
      return Status::Ok();
    }
    const int id = FindBuiltin(tmpl::kFunctions, f.c_str());
    if (id >= 0) {
      uint32_t argc;
      EMBER_RETURN_IF_ERROR(Arguments(e, 1, tmpl::kFunctions[id], "function", &argc));
      Emit(Op::kCall, 1 - static_cast<int>(argc), {static_cast<uint32_t>(id), argc});
      return Status::Ok();
    }
    // Any other name holds no function here (strftime_now among them): calling it is
    // an error when, and only if, the render reaches it, as in Jinja.
    Emit(Op::kPushString, 1,
         {StringConstant("'" + f + "' is undefined or not callable")});
    Emit(Op::kRaise, -1);
    undefined();
    return Status::Ok();
  }
  if (callee.kind != ExprKind::kAttr) {
    return ErrorAt(e.where, "only functions and methods can be called");
  }
  const Expr& object = *callee.children[0];
  if (object.kind == ExprKind::kName && object.text == "loop" && !loops_.empty()) {
    return ErrorAt(e.where, "loop." + callee.text + "() is not supported");
  }
  const int id = FindBuiltin(tmpl::kMethods, callee.text.c_str());
  if (id < 0) return ErrorAt(e.where, "method '" + callee.text + "' is not supported");
  EMBER_RETURN_IF_ERROR(Expression(object));
  uint32_t argc;
  EMBER_RETURN_IF_ERROR(Arguments(e, 1, tmpl::kMethods[id], "method", &argc));
  Emit(Op::kMethod, -static_cast<int>(argc), {static_cast<uint32_t>(id), argc});
  return Status::Ok();
}

}  // namespace ember::tools::jinja
