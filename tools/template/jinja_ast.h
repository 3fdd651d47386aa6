// The syntax tree of a chat template: the Jinja statements and expressions the parser
// accepts, each with the line and column it starts at (for the compiler's messages).
#ifndef EMBER_TOOLS_TEMPLATE_JINJA_AST_H_
#define EMBER_TOOLS_TEMPLATE_JINJA_AST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ember::tools::jinja {

struct Where {
  int line = 0, column = 0;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  kString,     // text
  kInt,        // int_value
  kFloat,      // float_value
  kConstant,   // name: "none", "true", "false" (any case Jinja accepts)
  kName,       // name
  kAttr,       // a.name
  kItem,       // a[b]
  kSlice,      // a[b:c:d]: children a, then start/stop/step (null when omitted)
  kUnary,      // op a: "not", "-", "+"
  kBinary,     // a op b: "+", "==", "in", "not in", "~", ...
  kAnd,        // a and b
  kOr,         // a or b
  kCondition,  // a if b else c (c null when omitted)
  kFilter,     // a | name(args, kwargs)
  kTest,       // a is [not] name(args)  (negated)
  kCall,       // a(args, kwargs): a is a name (a function) or an attribute (a method)
  kList,       // [a, b] or (a, b)
  kDict,       // {k: v, ...}: children alternate key, value
};

struct Expr {
  ExprKind kind;
  Where where;
  std::string text;  // a string literal, a name, an attribute, an operator, a filter/test
  int64_t int_value = 0;
  double float_value = 0;
  bool negated = false;                                 // kTest: "is not"
  int depth = 1;  // levels of the tree it roots (the parser bounds it: kMaxExprDepth)
  std::vector<ExprPtr> children;                        // operands, positional arguments
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // keyword arguments
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class StmtKind {
  kText,    // text
  kOutput,  // {{ expr }}
  kIf,      // branches (condition, body), else_body
  kFor,     // targets in iterable [if filter]: body [else: else_body]
  kSet,     // {% set target = value %} or {% set target.attr = value %}
  kBreak,
  kContinue,
};

struct Stmt {
  StmtKind kind;
  Where where;
  std::string text;                  // kText
  ExprPtr expr;                      // kOutput; kSet value; kFor iterable
  ExprPtr filter;                    // kFor: "if" condition (or null)
  std::vector<std::string> targets;  // kFor names; kSet: name (and attribute second)
  bool set_attribute = false;        // kSet: targets[0].targets[1] = ...
  std::vector<std::pair<ExprPtr, Body>> branches;  // kIf
  Body body;                                       // kFor
  Body else_body;                                  // kIf, kFor
};

}  // namespace ember::tools::jinja

#endif  // EMBER_TOOLS_TEMPLATE_JINJA_AST_H_
