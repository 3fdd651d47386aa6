// Jinja parser: expressions, one function per precedence level as Jinja2's own parser
// has them (see jinja_parser.cc for statements).
#include <cstring>

#include "tools/template/jinja_parser_internal.h"

namespace ember::tools::jinja {

Status Parser::Tuple(ExprPtr* out) {
  const Token& start = Peek();
  EMBER_RETURN_IF_ERROR(Expression(out));
  if (!IsOp(",")) return Status::Ok();
  ExprPtr list = Make(ExprKind::kList, start);
  EMBER_RETURN_IF_ERROR(Adopt(list.get(), std::move(*out)));
  while (SkipOp(",")) {
    if (Peek().kind == TokenKind::kStmtClose) break;
    ExprPtr item;
    EMBER_RETURN_IF_ERROR(Expression(&item));
    EMBER_RETURN_IF_ERROR(Adopt(list.get(), std::move(item)));
  }
  *out = std::move(list);
  return Status::Ok();
}

Status Parser::Expression(ExprPtr* out) {
  const Nested nested(this);
  EMBER_RETURN_IF_ERROR(nested.Check(Peek()));
  EMBER_RETURN_IF_ERROR(Or(out));
  while (IsName("if")) {
    const Token& at = Next();
    ExprPtr e = Make(ExprKind::kCondition, at);
    ExprPtr test, otherwise;
    EMBER_RETURN_IF_ERROR(Or(&test));
    if (SkipName("else")) EMBER_RETURN_IF_ERROR(Expression(&otherwise));
    // The value if true, the condition, the value if false (or null).
    EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(*out)));
    EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(test)));
    EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(otherwise)));
    *out = std::move(e);
  }
  return Status::Ok();
}

Status Parser::Binary(ExprPtr* out, Level next, std::initializer_list<const char*> ops,
                      ExprKind kind) {
  EMBER_RETURN_IF_ERROR((this->*next)(out));
  while (true) {
    const char* op = nullptr;
    for (const char* o : ops) {
      const bool word = o[0] >= 'a' && o[0] <= 'z';
      if (word ? IsName(o) : IsOp(o)) op = o;
    }
    if (!op) return Status::Ok();
    const Token& at = Next();
    ExprPtr e = Make(kind, at, op);
    ExprPtr right;
    EMBER_RETURN_IF_ERROR((this->*next)(&right));
    EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(*out)));
    EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(right)));
    *out = std::move(e);
  }
}

Status Parser::Not(ExprPtr* out) {
  if (!IsName("not")) return Compare(out);
  const Nested nested(this);
  EMBER_RETURN_IF_ERROR(nested.Check(Peek()));
  const Token& at = Next();
  ExprPtr e = Make(ExprKind::kUnary, at, "not");
  ExprPtr operand;
  EMBER_RETURN_IF_ERROR(Not(&operand));
  EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(operand)));
  *out = std::move(e);
  return Status::Ok();
}

Status Parser::Compare(ExprPtr* out) {
  EMBER_RETURN_IF_ERROR(Math1(out));
  while (true) {
    std::string op;
    for (const char* o : {"==", "!=", "<", ">", "<=", ">="}) {
      if (IsOp(o)) op = o;
    }
    if (IsName("in")) op = "in";
    if (IsName("not") && IsName("in", 1)) op = "not in";
    if (op.empty()) return Status::Ok();
    const Token& at = Next();
    if (op == "not in") ++pos_;
    ExprPtr e = Make(ExprKind::kBinary, at, op);
    ExprPtr right;
    EMBER_RETURN_IF_ERROR(Math1(&right));
    EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(*out)));
    EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(right)));
    *out = std::move(e);
  }
}

Status Parser::Math1(ExprPtr* out) {
  return Binary(out, &Parser::Concat, {"+", "-"}, ExprKind::kBinary);
}

Status Parser::Concat(ExprPtr* out) {
  return Binary(out, &Parser::Math2, {"~"}, ExprKind::kBinary);
}

Status Parser::Math2(ExprPtr* out) {
  return Binary(out, &Parser::Pow, {"*", "/", "//", "%"}, ExprKind::kBinary);
}

Status Parser::Pow(ExprPtr* out) {
  return Binary(out, &Parser::UnaryWithFilters, {"**"}, ExprKind::kBinary);
}

Status Parser::Unary(ExprPtr* out, bool with_filters) {
  if (IsOp("-") || IsOp("+")) {
    const Nested nested(this);
    EMBER_RETURN_IF_ERROR(nested.Check(Peek()));
    const Token& at = Next();
    ExprPtr e = Make(ExprKind::kUnary, at, at.value);
    ExprPtr operand;
    EMBER_RETURN_IF_ERROR(Unary(&operand, false));
    EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(operand)));
    *out = std::move(e);
  } else {
    EMBER_RETURN_IF_ERROR(Primary(out));
  }
  EMBER_RETURN_IF_ERROR(Postfix(out));
  return with_filters ? Filters(out) : Status::Ok();
}

Status Parser::Primary(ExprPtr* out) {
  const Token& t = Peek();
  switch (t.kind) {
    case TokenKind::kName: {
      ++pos_;
      static const char* const kConstants[] = {"none", "None",  "true",
                                               "True", "false", "False"};
      for (const char* c : kConstants) {
        if (t.value == c) {
          std::string lower = t.value;
          lower[0] = static_cast<char>(lower[0] | 0x20);
          *out = Make(ExprKind::kConstant, t, lower);
          return Status::Ok();
        }
      }
      *out = Make(ExprKind::kName, t, t.value);
      return Status::Ok();
    }
    case TokenKind::kString: {
      std::string text;
      while (Peek().kind == TokenKind::kString) text += Next().value;  // "a" "b"
      *out = Make(ExprKind::kString, t, text);
      return Status::Ok();
    }
    case TokenKind::kInt:
      *out = Make(ExprKind::kInt, Next());
      (*out)->int_value = t.int_value;
      return Status::Ok();
    case TokenKind::kFloat:
      *out = Make(ExprKind::kFloat, Next());
      (*out)->float_value = t.float_value;
      return Status::Ok();
    default:
      break;
  }
  if (SkipOp("(")) {
    if (SkipOp(")")) {
      *out = Make(ExprKind::kList, t);
      return Status::Ok();
    }
    EMBER_RETURN_IF_ERROR(Expression(out));
    if (IsOp(",")) {
      ExprPtr list = Make(ExprKind::kList, t);
      EMBER_RETURN_IF_ERROR(Adopt(list.get(), std::move(*out)));
      while (SkipOp(",") && !IsOp(")")) {
        ExprPtr item;
        EMBER_RETURN_IF_ERROR(Expression(&item));
        EMBER_RETURN_IF_ERROR(Adopt(list.get(), std::move(item)));
      }
      *out = std::move(list);
    }
    return Expect(")");
  }
  if (SkipOp("[")) {
    *out = Make(ExprKind::kList, t);
    while (!IsOp("]")) {
      ExprPtr item;
      EMBER_RETURN_IF_ERROR(Expression(&item));
      EMBER_RETURN_IF_ERROR(Adopt(out->get(), std::move(item)));
      if (!SkipOp(",")) break;
    }
    return Expect("]");
  }
  if (SkipOp("{")) {
    *out = Make(ExprKind::kDict, t);
    while (!IsOp("}")) {
      ExprPtr key, value;
      EMBER_RETURN_IF_ERROR(Expression(&key));
      EMBER_RETURN_IF_ERROR(Expect(":"));
      EMBER_RETURN_IF_ERROR(Expression(&value));
      EMBER_RETURN_IF_ERROR(Adopt(out->get(), std::move(key)));
      EMBER_RETURN_IF_ERROR(Adopt(out->get(), std::move(value)));
      if (!SkipOp(",")) break;
    }
    return Expect("}");
  }
  return Error(t, "expected an expression");
}

Status Parser::Postfix(ExprPtr* out) {
  while (true) {
    const Token& at = Peek();
    if (SkipOp(".")) {
      if (Peek().kind == TokenKind::kInt) {
        ExprPtr index = Make(ExprKind::kInt, Peek());
        index->int_value = Next().int_value;
        ExprPtr e = Make(ExprKind::kItem, at);
        EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(*out)));
        EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(index)));
        *out = std::move(e);
        continue;
      }
      if (Peek().kind != TokenKind::kName) return Error(Peek(), "expected an attribute");
      ExprPtr e = Make(ExprKind::kAttr, at, Next().value);
      EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(*out)));
      *out = std::move(e);
    } else if (SkipOp("[")) {
      EMBER_RETURN_IF_ERROR(Subscript(at, out));
    } else if (IsOp("(")) {
      EMBER_RETURN_IF_ERROR(Call(out));
    } else {
      return Status::Ok();
    }
  }
}

Status Parser::Subscript(const Token& at, ExprPtr* out) {
  ExprPtr parts[3];
  int colons = 0;
  for (int part = 0; part < 3; ++part) {
    if (!IsOp(":") && !IsOp("]")) EMBER_RETURN_IF_ERROR(Expression(&parts[part]));
    if (part < 2 && SkipOp(":")) {
      ++colons;
    } else {
      break;
    }
  }
  EMBER_RETURN_IF_ERROR(Expect("]"));
  ExprPtr e = Make(colons == 0 ? ExprKind::kItem : ExprKind::kSlice, at);
  EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(*out)));
  if (colons == 0) {
    if (!parts[0]) return Error(at, "empty subscript");
    EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(parts[0])));
  } else {
    for (ExprPtr& p : parts) EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(p)));
  }
  *out = std::move(e);
  return Status::Ok();
}

Status Parser::Arguments(Expr* call) {
  EMBER_RETURN_IF_ERROR(Expect("("));
  while (!IsOp(")")) {
    if (IsOp("*") || IsOp("**"))
      return Error(Peek(), "*args and **kwargs are not supported");
    if (Peek().kind == TokenKind::kName && IsOp("=", 1)) {
      std::string name = Next().value;
      ++pos_;
      ExprPtr value;
      EMBER_RETURN_IF_ERROR(Expression(&value));
      EMBER_RETURN_IF_ERROR(Adopt(call, &name, std::move(value)));
    } else {
      if (!call->kwargs.empty()) {
        return Error(Peek(), "a positional argument after a keyword argument");
      }
      ExprPtr value;
      EMBER_RETURN_IF_ERROR(Expression(&value));
      EMBER_RETURN_IF_ERROR(Adopt(call, std::move(value)));
    }
    if (!SkipOp(",")) break;
  }
  return Expect(")");
}

Status Parser::Call(ExprPtr* out) {
  ExprPtr e = Make(ExprKind::kCall, Peek());
  EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(*out)));
  EMBER_RETURN_IF_ERROR(Arguments(e.get()));
  *out = std::move(e);
  return Status::Ok();
}

Status Parser::Filters(ExprPtr* out) {
  while (true) {
    if (SkipOp("|")) {
      if (Peek().kind != TokenKind::kName) return Error(Peek(), "expected a filter name");
      const Token& name = Next();
      ExprPtr e = Make(ExprKind::kFilter, name, name.value);
      EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(*out)));
      if (IsOp("(")) EMBER_RETURN_IF_ERROR(Arguments(e.get()));
      *out = std::move(e);
    } else if (IsName("is")) {
      ++pos_;
      const bool negated = SkipName("not");
      if (Peek().kind != TokenKind::kName) return Error(Peek(), "expected a test name");
      const Token& name = Next();
      ExprPtr e = Make(ExprKind::kTest, name, name.value);
      e->negated = negated;
      EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(*out)));
      if (IsOp("(")) {
        EMBER_RETURN_IF_ERROR(Arguments(e.get()));
      } else if (StartsTestArgument()) {
        ExprPtr arg;  // "is divisibleby 3", "is equalto 'user'"
        EMBER_RETURN_IF_ERROR(Unary(&arg, false));
        EMBER_RETURN_IF_ERROR(Adopt(e.get(), std::move(arg)));
      }
      *out = std::move(e);
    } else if (IsOp("(")) {
      EMBER_RETURN_IF_ERROR(Call(out));
    } else {
      return Status::Ok();
    }
  }
}

bool Parser::StartsTestArgument() const {
  const Token& t = Peek();
  if (t.kind == TokenKind::kString || t.kind == TokenKind::kInt ||
      t.kind == TokenKind::kFloat) {
    return true;
  }
  if (t.kind != TokenKind::kName) return IsOp("[") || IsOp("{");
  for (const char* word : {"else", "or", "and", "if", "in", "not", "is"}) {
    if (t.value == word) return false;
  }
  return true;
}

}  // namespace ember::tools::jinja
