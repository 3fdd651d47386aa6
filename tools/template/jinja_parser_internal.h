// The Jinja parser's state, shared by its statement and expression halves
// (jinja_parser.cc, jinja_parse_expr.cc).
#ifndef EMBER_TOOLS_TEMPLATE_JINJA_PARSER_INTERNAL_H_
#define EMBER_TOOLS_TEMPLATE_JINJA_PARSER_INTERNAL_H_

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "runtime/status.h"
#include "tools/template/jinja_ast.h"
#include "tools/template/jinja_lexer.h"

namespace ember::tools::jinja {

// The parser recurses into nested blocks, brackets and unary operators, and the compiler
// walks the trees it builds recursively: both are bounded, far below what a 1 MB thread's
// stack holds, so a hostile template gets a message, never a stack overflow.
// Blocks, brackets and unary operators nested in one another, in levels.
constexpr int kMaxNesting = 64;
// Levels of an expression's tree (a chain `a ~ b ~ c` is one level per operator).
constexpr int kMaxExprDepth = 256;

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}
  Status Template(Body* body);

 private:
  // One level of recursion for as long as it lives; Check() refuses one too many.
  class Nested {
   public:
    explicit Nested(Parser* p) : p_(p) { ++p_->nesting_; }
    ~Nested() { --p_->nesting_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;
    Status Check(const Token& at) const {
      if (p_->nesting_ <= kMaxNesting) return Status::Ok();
      return p_->Error(at, "blocks, brackets and unary operators nest deeper than the "
                           "64 levels a chat template may have");
    }

   private:
    Parser* p_;
  };
  // Appends child (may be null) to parent's operands, or as keyword argument `name`;
  // refuses a tree deeper than kMaxExprDepth.
  Status Adopt(Expr* parent, ExprPtr child) { return Adopt(parent, nullptr, std::move(child)); }
  Status Adopt(Expr* parent, std::string* name, ExprPtr child) {
    if (child && child->depth + 1 > parent->depth) parent->depth = child->depth + 1;
    if (name) {
      parent->kwargs.emplace_back(std::move(*name), std::move(child));
    } else {
      parent->children.push_back(std::move(child));
    }
    if (parent->depth <= kMaxExprDepth) return Status::Ok();
    return InvalidArgument(
        "chat template line %d, column %d: an expression deeper than the %d levels a "
        "chat template may have",
        parent->where.line, parent->where.column, kMaxExprDepth);
  }
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
  Status ParseBody(Body* body, std::initializer_list<const char*> ends, std::string* end);
  Status Statement(const Token& keyword, Body* body);
  // An expression, or several separated by commas (a tuple, as in {% set x = 1, 2 %}).
  Status Tuple(ExprPtr* out);
  Status Expression(ExprPtr* out);
  // Left-associative binary levels.
  using Level = Status (Parser::*)(ExprPtr*);
  Status Binary(ExprPtr* out, Level next, std::initializer_list<const char*> ops,
                ExprKind kind);
  Status Or(ExprPtr* out) { return Binary(out, &Parser::And, {"or"}, ExprKind::kOr); }
  Status And(ExprPtr* out) { return Binary(out, &Parser::Not, {"and"}, ExprKind::kAnd); }
  Status Not(ExprPtr* out);
  Status Compare(ExprPtr* out);
  Status Math1(ExprPtr* out);
  Status Concat(ExprPtr* out);
  Status Math2(ExprPtr* out);
  Status Pow(ExprPtr* out);
  Status UnaryWithFilters(ExprPtr* out) { return Unary(out, true); }
  Status Unary(ExprPtr* out, bool with_filters);
  Status Primary(ExprPtr* out);
  // Attributes, subscripts and calls after a primary.
  Status Postfix(ExprPtr* out);
  Status Subscript(const Token& at, ExprPtr* out);
  // (args, name=kwargs) after a callee.
  Status Arguments(Expr* call);
  Status Call(ExprPtr* out);
  // | filter(args) and "is [not] test args" after an operand.
  Status Filters(ExprPtr* out);
  bool StartsTestArgument() const;

  std::vector<Token> t_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace ember::tools::jinja

#endif  // EMBER_TOOLS_TEMPLATE_JINJA_PARSER_INTERNAL_H_
