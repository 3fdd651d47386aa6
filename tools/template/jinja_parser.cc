// Jinja parser (see jinja_parser.h): recursive descent, one function per precedence level
// as Jinja2's own parser has them (condition < or < and < not < comparison < + - < ~ <
// * / // % < ** < unary, with filters, tests, calls, attributes and subscripts tightest).
#include "tools/template/jinja_parser.h"

#include <cstring>
#include <initializer_list>
#include <vector>

#include "tools/template/jinja_lexer.h"
#include "tools/template/jinja_parser_internal.h"

namespace ember::tools::jinja {

Status Parser::Template(Body* body) {
  std::string end;
  EMBER_RETURN_IF_ERROR(ParseBody(body, {}, &end));
  if (!end.empty()) return Error(Peek(), ("unexpected {% " + end + " %}").c_str());
  return Status::Ok();
}

Status Parser::ParseBody(Body* body, std::initializer_list<const char*> ends,
                         std::string* end) {
  const Nested nested(this);
  EMBER_RETURN_IF_ERROR(nested.Check(Peek()));
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
      if (keyword.kind != TokenKind::kName) return Error(keyword, "expected a statement");
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

Status Parser::Statement(const Token& keyword, Body* body) {
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
      if (Peek().kind != TokenKind::kName) return Error(Peek(), "expected an attribute");
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

Status Parse(const std::string& source, Body* body) {
  std::vector<Token> tokens;
  EMBER_RETURN_IF_ERROR(Tokenize(source, &tokens));
  body->clear();
  return Parser(std::move(tokens)).Template(body);
}

}  // namespace ember::tools::jinja
