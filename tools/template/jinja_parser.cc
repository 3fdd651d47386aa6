// Jinja parser (see jinja_parser.h): recursive descent, one function per precedence level
// as Jinja2's own parser has them (condition < or < and < not < comparison < + - < ~ <
// * / // % < ** < unary, with filters, tests, calls, attributes and subscripts tightest).
#include "tools/template/jinja_parser.h"

#include <cstring>
#include <initializer_list>
#include <vector>

#include "tools/template/jinja_lexer.h"

namespace ember::tools::jinja {
namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Status Template(Body* body) {
    std::string end;
    EMBER_RETURN_IF_ERROR(ParseBody(body, {}, &end));
    if (!end.empty()) return Error(Peek(), ("unexpected {% " + end + " %}").c_str());
    return Status::Ok();
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    const size_t i = pos_ + ahead;
    return t_[i < t_.size() ? i : t_.size() - 1];
  }
  const Token& Next() { return t_[pos_ < t_.size() - 1 ? pos_++ : pos_]; }
  bool IsOp(const char* op, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kOperator && Peek(ahead).value == op;
  }
  bool IsName(const char* name, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kName && Peek(ahead).value == name;
  }
  bool SkipOp(const char* op) {
    if (!IsOp(op)) return false;
    ++pos_;
    return true;
  }
  bool SkipName(const char* name) {
    if (!IsName(name)) return false;
    ++pos_;
    return true;
  }
  Status Error(const Token& at, const char* what) const {
    return InvalidArgument("chat template line %d, column %d: %s", at.line, at.column,
                           what);
  }
  Status Expect(const char* op) {
    if (SkipOp(op)) return Status::Ok();
    return Error(Peek(), ("expected '" + std::string(op) + "'").c_str());
  }
  Status ExpectClose() {
    if (Peek().kind == TokenKind::kStmtClose) {
      ++pos_;
      return Status::Ok();
    }
    return Error(Peek(), "expected '%}'");
  }
  static Where At(const Token& t) { return Where{t.line, t.column}; }
  static ExprPtr Make(ExprKind kind, const Token& at, std::string text = "") {
    ExprPtr e(new Expr());
    e->kind = kind;
    e->where = At(at);
    e->text = std::move(text);
    return e;
  }

  // Statements until a {% keyword %} in `ends` (left unconsumed, named in *end) or the
  // end of the template (*end empty).
  Status ParseBody(Body* body, std::initializer_list<const char*> ends,
                   std::string* end) {
    end->clear();
    while (true) {
      const Token& t = Peek();
      if (t.kind == TokenKind::kEnd) return Status::Ok();
      if (t.kind == TokenKind::kText) {
        StmtPtr s(new Stmt());
        s->kind = StmtKind::kText;
        s->where = At(t);
        s->text = t.value;
        body->push_back(std::move(s));
        ++pos_;
      } else if (t.kind == TokenKind::kOutputOpen) {
        ++pos_;
        StmtPtr s(new Stmt());
        s->kind = StmtKind::kOutput;
        s->where = At(t);
        EMBER_RETURN_IF_ERROR(Expression(&s->expr));
        if (Peek().kind != TokenKind::kOutputClose) return Error(Peek(), "expected '}}'");
        ++pos_;
        body->push_back(std::move(s));
      } else if (t.kind == TokenKind::kStmtOpen) {
        const Token& keyword = Peek(1);
        if (keyword.kind != TokenKind::kName)
          return Error(keyword, "expected a statement");
        for (const char* e : ends) {
          if (keyword.value == e) {
            *end = e;
            return Status::Ok();
          }
        }
        pos_ += 2;
        EMBER_RETURN_IF_ERROR(Statement(keyword, body));
      } else {
        return Error(t, "unexpected token");
      }
    }
  }

  Status Statement(const Token& keyword, Body* body) {
    const std::string& k = keyword.value;
    StmtPtr s(new Stmt());
    s->where = At(keyword);
    if (k == "if") {
      s->kind = StmtKind::kIf;
      std::string end = "elif";
      while (end == "elif" || end == "if") {
        ExprPtr condition;
        EMBER_RETURN_IF_ERROR(Expression(&condition));
        EMBER_RETURN_IF_ERROR(ExpectClose());
        Body branch;
        EMBER_RETURN_IF_ERROR(ParseBody(&branch, {"elif", "else", "endif"}, &end));
        s->branches.emplace_back(std::move(condition), std::move(branch));
        if (end.empty()) return Error(keyword, "{% if %} without {% endif %}");
        pos_ += 2;
      }
      if (end == "else") {
        EMBER_RETURN_IF_ERROR(ExpectClose());
        EMBER_RETURN_IF_ERROR(ParseBody(&s->else_body, {"endif"}, &end));
        if (end.empty()) return Error(keyword, "{% if %} without {% endif %}");
        pos_ += 2;
      }
      EMBER_RETURN_IF_ERROR(ExpectClose());
    } else if (k == "for") {
      s->kind = StmtKind::kFor;
      const bool parenthesized = SkipOp("(");
      do {
        if (Peek().kind != TokenKind::kName)
          return Error(Peek(), "expected a loop variable");
        s->targets.push_back(Next().value);
      } while (SkipOp(","));
      if (parenthesized) EMBER_RETURN_IF_ERROR(Expect(")"));
      if (!SkipName("in")) return Error(Peek(), "expected 'in'");
      EMBER_RETURN_IF_ERROR(Or(&s->expr));
      if (SkipName("if")) EMBER_RETURN_IF_ERROR(Expression(&s->filter));
      if (IsName("recursive")) return Error(Peek(), "recursive loops are not supported");
      EMBER_RETURN_IF_ERROR(ExpectClose());
      std::string end;
      EMBER_RETURN_IF_ERROR(ParseBody(&s->body, {"else", "endfor"}, &end));
      if (end == "else") {
        pos_ += 2;
        EMBER_RETURN_IF_ERROR(ExpectClose());
        EMBER_RETURN_IF_ERROR(ParseBody(&s->else_body, {"endfor"}, &end));
      }
      if (end.empty()) return Error(keyword, "{% for %} without {% endfor %}");
      pos_ += 2;
      EMBER_RETURN_IF_ERROR(ExpectClose());
    } else if (k == "set") {
      s->kind = StmtKind::kSet;
      if (Peek().kind != TokenKind::kName) return Error(Peek(), "expected a name to set");
      s->targets.push_back(Next().value);
      if (SkipOp(".")) {
        if (Peek().kind != TokenKind::kName)
          return Error(Peek(), "expected an attribute");
        s->targets.push_back(Next().value);
        s->set_attribute = true;
      }
      if (IsOp(",")) return Error(Peek(), "{% set a, b = ... %} is not supported");
      if (Peek().kind == TokenKind::kStmtClose) {
        return Error(keyword,
                     "block assignments ({% set x %}...{% endset %}) are not "
                     "supported");
      }
      EMBER_RETURN_IF_ERROR(Expect("="));
      EMBER_RETURN_IF_ERROR(Tuple(&s->expr));
      EMBER_RETURN_IF_ERROR(ExpectClose());
    } else if (k == "break" || k == "continue") {
      s->kind = k == "break" ? StmtKind::kBreak : StmtKind::kContinue;
      EMBER_RETURN_IF_ERROR(ExpectClose());
    } else if (k == "generation" || k == "endgeneration") {
      // Hugging Face's marker of the assistant's text for training masks: no output.
      return ExpectClose();
    } else if (k.rfind("end", 0) == 0 || k == "elif" || k == "else") {
      return Error(keyword, ("unexpected {% " + k + " %}").c_str());
    } else {
      return Error(keyword, ("{% " + k + " %} is not supported").c_str());
    }
    body->push_back(std::move(s));
    return Status::Ok();
  }

  // An expression, or several separated by commas (a tuple, as in {% set x = 1, 2 %}).
  Status Tuple(ExprPtr* out) {
    const Token& start = Peek();
    EMBER_RETURN_IF_ERROR(Expression(out));
    if (!IsOp(",")) return Status::Ok();
    ExprPtr list = Make(ExprKind::kList, start);
    list->children.push_back(std::move(*out));
    while (SkipOp(",")) {
      if (Peek().kind == TokenKind::kStmtClose) break;
      ExprPtr item;
      EMBER_RETURN_IF_ERROR(Expression(&item));
      list->children.push_back(std::move(item));
    }
    *out = std::move(list);
    return Status::Ok();
  }

  Status Expression(ExprPtr* out) {
    EMBER_RETURN_IF_ERROR(Or(out));
    while (IsName("if")) {
      const Token& at = Next();
      ExprPtr e = Make(ExprKind::kCondition, at);
      ExprPtr test, otherwise;
      EMBER_RETURN_IF_ERROR(Or(&test));
      if (SkipName("else")) EMBER_RETURN_IF_ERROR(Expression(&otherwise));
      e->children.push_back(std::move(*out));       // value if true
      e->children.push_back(std::move(test));       // condition
      e->children.push_back(std::move(otherwise));  // value if false (or null)
      *out = std::move(e);
    }
    return Status::Ok();
  }

  // Left-associative binary levels.
  using Level = Status (Parser::*)(ExprPtr*);
  Status Binary(ExprPtr* out, Level next, std::initializer_list<const char*> ops,
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
      e->children.push_back(std::move(*out));
      e->children.push_back(std::move(right));
      *out = std::move(e);
    }
  }
  Status Or(ExprPtr* out) { return Binary(out, &Parser::And, {"or"}, ExprKind::kOr); }
  Status And(ExprPtr* out) { return Binary(out, &Parser::Not, {"and"}, ExprKind::kAnd); }
  Status Not(ExprPtr* out) {
    if (!IsName("not")) return Compare(out);
    const Token& at = Next();
    ExprPtr e = Make(ExprKind::kUnary, at, "not");
    ExprPtr operand;
    EMBER_RETURN_IF_ERROR(Not(&operand));
    e->children.push_back(std::move(operand));
    *out = std::move(e);
    return Status::Ok();
  }
  Status Compare(ExprPtr* out) {
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
      e->children.push_back(std::move(*out));
      e->children.push_back(std::move(right));
      *out = std::move(e);
    }
  }
  Status Math1(ExprPtr* out) {
    return Binary(out, &Parser::Concat, {"+", "-"}, ExprKind::kBinary);
  }
  Status Concat(ExprPtr* out) {
    return Binary(out, &Parser::Math2, {"~"}, ExprKind::kBinary);
  }
  Status Math2(ExprPtr* out) {
    return Binary(out, &Parser::Pow, {"*", "/", "//", "%"}, ExprKind::kBinary);
  }
  Status Pow(ExprPtr* out) {
    return Binary(out, &Parser::UnaryWithFilters, {"**"}, ExprKind::kBinary);
  }
  Status UnaryWithFilters(ExprPtr* out) { return Unary(out, true); }

  Status Unary(ExprPtr* out, bool with_filters) {
    if (IsOp("-") || IsOp("+")) {
      const Token& at = Next();
      ExprPtr e = Make(ExprKind::kUnary, at, at.value);
      ExprPtr operand;
      EMBER_RETURN_IF_ERROR(Unary(&operand, false));
      e->children.push_back(std::move(operand));
      *out = std::move(e);
    } else {
      EMBER_RETURN_IF_ERROR(Primary(out));
    }
    EMBER_RETURN_IF_ERROR(Postfix(out));
    return with_filters ? Filters(out) : Status::Ok();
  }

  Status Primary(ExprPtr* out) {
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
        list->children.push_back(std::move(*out));
        while (SkipOp(",") && !IsOp(")")) {
          ExprPtr item;
          EMBER_RETURN_IF_ERROR(Expression(&item));
          list->children.push_back(std::move(item));
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
        (*out)->children.push_back(std::move(item));
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
        (*out)->children.push_back(std::move(key));
        (*out)->children.push_back(std::move(value));
        if (!SkipOp(",")) break;
      }
      return Expect("}");
    }
    return Error(t, "expected an expression");
  }

  // Attributes, subscripts and calls after a primary.
  Status Postfix(ExprPtr* out) {
    while (true) {
      const Token& at = Peek();
      if (SkipOp(".")) {
        if (Peek().kind == TokenKind::kInt) {
          ExprPtr index = Make(ExprKind::kInt, Peek());
          index->int_value = Next().int_value;
          ExprPtr e = Make(ExprKind::kItem, at);
          e->children.push_back(std::move(*out));
          e->children.push_back(std::move(index));
          *out = std::move(e);
          continue;
        }
        if (Peek().kind != TokenKind::kName)
          return Error(Peek(), "expected an attribute");
        ExprPtr e = Make(ExprKind::kAttr, at, Next().value);
        e->children.push_back(std::move(*out));
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

  Status Subscript(const Token& at, ExprPtr* out) {
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
    e->children.push_back(std::move(*out));
    if (colons == 0) {
      if (!parts[0]) return Error(at, "empty subscript");
      e->children.push_back(std::move(parts[0]));
    } else {
      for (ExprPtr& p : parts) e->children.push_back(std::move(p));
    }
    *out = std::move(e);
    return Status::Ok();
  }

  // (args, name=kwargs) after a callee.
  Status Arguments(Expr* call) {
    EMBER_RETURN_IF_ERROR(Expect("("));
    while (!IsOp(")")) {
      if (IsOp("*") || IsOp("**"))
        return Error(Peek(), "*args and **kwargs are not supported");
      if (Peek().kind == TokenKind::kName && IsOp("=", 1)) {
        std::string name = Next().value;
        ++pos_;
        ExprPtr value;
        EMBER_RETURN_IF_ERROR(Expression(&value));
        call->kwargs.emplace_back(std::move(name), std::move(value));
      } else {
        if (!call->kwargs.empty()) {
          return Error(Peek(), "a positional argument after a keyword argument");
        }
        ExprPtr value;
        EMBER_RETURN_IF_ERROR(Expression(&value));
        call->children.push_back(std::move(value));
      }
      if (!SkipOp(",")) break;
    }
    return Expect(")");
  }

  Status Call(ExprPtr* out) {
    ExprPtr e = Make(ExprKind::kCall, Peek());
    e->children.push_back(std::move(*out));
    EMBER_RETURN_IF_ERROR(Arguments(e.get()));
    *out = std::move(e);
    return Status::Ok();
  }

  // | filter(args) and "is [not] test args" after an operand.
  Status Filters(ExprPtr* out) {
    while (true) {
      if (SkipOp("|")) {
        if (Peek().kind != TokenKind::kName)
          return Error(Peek(), "expected a filter name");
        const Token& name = Next();
        ExprPtr e = Make(ExprKind::kFilter, name, name.value);
        e->children.push_back(std::move(*out));
        if (IsOp("(")) EMBER_RETURN_IF_ERROR(Arguments(e.get()));
        *out = std::move(e);
      } else if (IsName("is")) {
        ++pos_;
        const bool negated = SkipName("not");
        if (Peek().kind != TokenKind::kName) return Error(Peek(), "expected a test name");
        const Token& name = Next();
        ExprPtr e = Make(ExprKind::kTest, name, name.value);
        e->negated = negated;
        e->children.push_back(std::move(*out));
        if (IsOp("(")) {
          EMBER_RETURN_IF_ERROR(Arguments(e.get()));
        } else if (StartsTestArgument()) {
          ExprPtr arg;  // "is divisibleby 3", "is equalto 'user'"
          EMBER_RETURN_IF_ERROR(Unary(&arg, false));
          e->children.push_back(std::move(arg));
        }
        *out = std::move(e);
      } else if (IsOp("(")) {
        EMBER_RETURN_IF_ERROR(Call(out));
      } else {
        return Status::Ok();
      }
    }
  }

  bool StartsTestArgument() const {
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

  std::vector<Token> t_;
  size_t pos_ = 0;
};

}  // namespace

Status Parse(const std::string& source, Body* body) {
  std::vector<Token> tokens;
  EMBER_RETURN_IF_ERROR(Tokenize(source, &tokens));
  body->clear();
  return Parser(std::move(tokens)).Template(body);
}

}  // namespace ember::tools::jinja
