// The compiler's state, shared by its statement and expression halves
// (jinja_compiler.cc, jinja_compile_expr.cc).
#ifndef EMBER_TOOLS_TEMPLATE_JINJA_COMPILER_INTERNAL_H_
#define EMBER_TOOLS_TEMPLATE_JINJA_COMPILER_INTERNAL_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "runtime/chat/chat_template_format.h"
#include "runtime/model/model_writer.h"
#include "runtime/status.h"
#include "tools/template/jinja_ast.h"

namespace ember::tools::jinja {

class Compiler {
 public:
  Status Run(const Body& body, ChatProgramSpec* program);

 private:
  struct LoopLabels {
    uint32_t next = 0;           // where `continue` goes
    std::vector<size_t> breaks;  // jumps to patch to the loop's end
  };

  Status ErrorAt(const Where& where, const std::string& what) const;
  // Appends an instruction; stack_delta is its effect on the stack's depth.
  void Emit(tmpl::Op op, int stack_delta, std::initializer_list<uint32_t> operands = {});
  size_t EmitJump(tmpl::Op op, int stack_delta);  // returns the operand to patch
  uint32_t Here() const { return static_cast<uint32_t>(code_->size()); }
  void PatchHere(size_t operand_at);
  void Patch(size_t operand_at, uint32_t target);
  uint32_t StringConstant(const std::string& s);
  uint32_t FloatConstant(double v);
  uint32_t NewSlot();
  uint32_t Resolve(const std::string& name);

  Status Statements(const Body& body);
  Status Statement(const Stmt& s);
  Status For(const Stmt& s);
  void StoreTargets(const std::vector<uint32_t>& target_slots);

  Status Expression(const Expr& e);
  Status Name(const Expr& e);
  Status Attribute(const Expr& e);
  Status Binary(const Expr& e);
  Status Filter(const Expr& e);
  Status TestExpr(const Expr& e);
  Status Call(const Expr& e);
  // Pushes a builtin's arguments (positional, then keywords by parameter name); returns
  // how many positions it pushed.
  Status Arguments(const Expr& call, size_t first_child, const tmpl::Builtin& builtin,
                   const char* kind, uint32_t* argc);

  ChatProgramSpec* program_ = nullptr;
  std::vector<uint8_t>* code_ = nullptr;
  std::map<std::string, uint32_t> string_ids_;
  std::vector<std::map<std::string, uint32_t>> scopes_;  // [0]: globals
  std::vector<LoopLabels> loops_;
  uint32_t num_slots_ = 0;
  int depth_ = 0, max_depth_ = 0;
  int loop_depth_ = 0, max_loops_ = 0;
  bool filtering_ = false;  // compiling a loop's "if" filter (no `loop` there)
};

}  // namespace ember::tools::jinja

#endif  // EMBER_TOOLS_TEMPLATE_JINJA_COMPILER_INTERNAL_H_
