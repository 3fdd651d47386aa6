// Jinja compiler (see jinja_compiler.h): statements, scopes and the code buffer.
// Expressions are in jinja_compile_expr.cc.
//
// Scopes follow Python's Jinja2: a for loop's body is a scope of its own, which each
// iteration starts afresh from the enclosing one (a name set in the body reads the outer
// value until it is set again in that iteration, and the outer value never changes);
// "if" makes no scope. Each name set in a loop body gets a slot of that loop, copied from
// the enclosing scope's slot at the start of every iteration.
#include "tools/template/jinja_compiler.h"

#include <cstring>
#include <set>

#include "tools/template/jinja_compiler_internal.h"

namespace ember::tools::jinja {

using tmpl::Op;

Status Compiler::ErrorAt(const Where& where, const std::string& what) const {
  return InvalidArgument("chat template line %d, column %d: %s", where.line, where.column,
                         what.c_str());
}

void Compiler::Emit(Op op, int stack_delta, std::initializer_list<uint32_t> operands) {
  code_->push_back(static_cast<uint8_t>(op));
  for (uint32_t v : operands) {
    for (int i = 0; i < 4; ++i) code_->push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  depth_ += stack_delta;
  if (depth_ > max_depth_) max_depth_ = depth_;
}

size_t Compiler::EmitJump(Op op, int stack_delta) {
  Emit(op, stack_delta, {0});
  return code_->size() - 4;
}

void Compiler::PatchHere(size_t operand_at) { Patch(operand_at, Here()); }

void Compiler::Patch(size_t operand_at, uint32_t target) {
  for (int i = 0; i < 4; ++i) {
    (*code_)[operand_at + i] = static_cast<uint8_t>(target >> (8 * i));
  }
}

uint32_t Compiler::StringConstant(const std::string& s) {
  auto it = string_ids_.find(s);
  if (it != string_ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(program_->strings.size());
  program_->strings.push_back(s);
  string_ids_[s] = id;
  return id;
}

uint32_t Compiler::FloatConstant(double v) {
  program_->floats.push_back(v);
  return static_cast<uint32_t>(program_->floats.size() - 1);
}

uint32_t Compiler::NewSlot() { return num_slots_++; }

// The slot a name reads or sets: the innermost scope's that has it, else a global one
// (made on first use: a free name starts undefined).
uint32_t Compiler::Resolve(const std::string& name) {
  for (size_t i = scopes_.size(); i-- > 0;) {
    auto it = scopes_[i].find(name);
    if (it != scopes_[i].end()) return it->second;
  }
  const uint32_t slot = NewSlot();
  scopes_[0][name] = slot;
  return slot;
}

// Names a loop body sets directly or inside its ifs (not inside nested loops, which
// are scopes of their own).
static void AssignedNames(const Body& body, std::set<std::string>* names) {
  for (const StmtPtr& s : body) {
    if (s->kind == StmtKind::kSet && !s->set_attribute) names->insert(s->targets[0]);
    if (s->kind == StmtKind::kIf) {
      for (const auto& branch : s->branches) AssignedNames(branch.second, names);
      AssignedNames(s->else_body, names);
    }
  }
}

Status Compiler::Statements(const Body& body) {
  for (const StmtPtr& s : body) EMBER_RETURN_IF_ERROR(Statement(*s));
  return Status::Ok();
}

Status Compiler::Statement(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::kText:
      Emit(Op::kText, 0, {StringConstant(s.text)});
      return Status::Ok();
    case StmtKind::kOutput:
      if (s.expr->kind == ExprKind::kString) {
        Emit(Op::kText, 0, {StringConstant(s.expr->text)});
        return Status::Ok();
      }
      EMBER_RETURN_IF_ERROR(Expression(*s.expr));
      Emit(Op::kOutput, -1);
      return Status::Ok();
    case StmtKind::kIf: {
      std::vector<size_t> to_end;
      for (const auto& [condition, branch] : s.branches) {
        EMBER_RETURN_IF_ERROR(Expression(*condition));
        const size_t skip = EmitJump(Op::kJumpIfFalse, -1);
        EMBER_RETURN_IF_ERROR(Statements(branch));
        to_end.push_back(EmitJump(Op::kJump, 0));
        PatchHere(skip);
      }
      EMBER_RETURN_IF_ERROR(Statements(s.else_body));
      for (size_t at : to_end) PatchHere(at);
      return Status::Ok();
    }
    case StmtKind::kFor:
      return For(s);
    case StmtKind::kSet:
      if (s.set_attribute) {
        Emit(Op::kLoad, 1, {Resolve(s.targets[0])});
        EMBER_RETURN_IF_ERROR(Expression(*s.expr));
        Emit(Op::kSetAttr, -2, {StringConstant(s.targets[1])});
        return Status::Ok();
      }
      EMBER_RETURN_IF_ERROR(Expression(*s.expr));
      Emit(Op::kStore, -1, {Resolve(s.targets[0])});
      return Status::Ok();
    case StmtKind::kBreak:
    case StmtKind::kContinue: {
      if (loops_.empty()) {
        return ErrorAt(s.where, s.kind == StmtKind::kBreak
                                    ? "{% break %} outside a loop"
                                    : "{% continue %} outside a loop");
      }
      LoopLabels& loop = loops_.back();
      if (s.kind == StmtKind::kContinue) {
        Emit(Op::kJump, 0, {loop.next});
      } else {
        loop.breaks.push_back(EmitJump(Op::kJump, 0));
      }
      return Status::Ok();
    }
  }
  return ErrorAt(s.where, "unknown statement");
}

// Stores the item on the stack into the loop's target slots.
void Compiler::StoreTargets(const std::vector<uint32_t>& target_slots) {
  if (target_slots.size() == 1) {
    Emit(Op::kStore, -1, {target_slots[0]});
    return;
  }
  const int n = static_cast<int>(target_slots.size());
  Emit(Op::kUnpack, n - 1, {static_cast<uint32_t>(n)});
  for (size_t i = target_slots.size(); i-- > 0;) Emit(Op::kStore, -1, {target_slots[i]});
}

Status Compiler::For(const Stmt& s) {
  // The loop's scope: its targets, and the names its body sets.
  std::set<std::string> assigned;
  AssignedNames(s.body, &assigned);
  std::vector<std::pair<uint32_t, uint32_t>> copies;  // (outer slot, loop slot)
  for (const std::string& name : assigned) {
    bool target = false;
    for (const std::string& t : s.targets) target |= t == name;
    if (!target) copies.emplace_back(Resolve(name), 0);
  }
  // The iterable is read in the enclosing scope.
  EMBER_RETURN_IF_ERROR(Expression(*s.expr));
  scopes_.emplace_back();
  std::vector<uint32_t> target_slots;
  for (const std::string& t : s.targets) {
    target_slots.push_back(NewSlot());
    scopes_.back()[t] = target_slots.back();
  }
  size_t c = 0;
  for (const std::string& name : assigned) {
    if (scopes_.back().count(name)) continue;
    copies[c].second = NewSlot();
    scopes_.back()[name] = copies[c++].second;
  }
  const auto copy_in = [&] {
    for (const auto& [outer, inner] : copies) Emit(Op::kCopy, 0, {outer, inner});
  };
  Emit(Op::kIterStart, -1);
  if (++loop_depth_ > max_loops_) max_loops_ = loop_depth_;
  if (s.filter) {
    // `for x in items if condition`: the items that pass, first, as a list (so that
    // loop.index and loop.length count only them, as Jinja's do).
    Emit(Op::kNewList, 1);
    copy_in();
    const uint32_t next = Here();
    const size_t exhausted = EmitJump(Op::kIterNext, 1);
    Emit(Op::kDup, 1);
    StoreTargets(target_slots);
    filtering_ = true;
    EMBER_RETURN_IF_ERROR(Expression(*s.filter));
    filtering_ = false;
    const size_t drop = EmitJump(Op::kJumpIfFalse, -1);
    Emit(Op::kAppend, -1);
    Emit(Op::kJump, 0, {next});
    PatchHere(drop);
    depth_ += 1;  // the item is still there on this path
    Emit(Op::kPop, -1);
    Emit(Op::kJump, 0, {next});
    PatchHere(exhausted);
    Emit(Op::kIterEnd, 0);
    Emit(Op::kIterStart, -1);
  }
  LoopLabels labels;
  labels.next = Here();
  const size_t exhausted = EmitJump(Op::kIterNext, 1);
  StoreTargets(target_slots);
  copy_in();
  loops_.push_back(labels);
  EMBER_RETURN_IF_ERROR(Statements(s.body));
  Emit(Op::kJump, 0, {loops_.back().next});
  const std::vector<size_t> breaks = loops_.back().breaks;
  loops_.pop_back();
  scopes_.pop_back();
  PatchHere(exhausted);
  for (size_t at : breaks) PatchHere(at);
  --loop_depth_;
  if (s.else_body.empty()) {
    Emit(Op::kIterEnd, 0);
  } else {
    const size_t done = EmitJump(Op::kIterEndElse, 0);
    EMBER_RETURN_IF_ERROR(Statements(s.else_body));
    PatchHere(done);
  }
  return Status::Ok();
}

Status Compiler::Run(const Body& body, ChatProgramSpec* program) {
  program_ = program;
  code_ = &program->code;
  program->code.clear();
  program->strings.clear();
  program->floats.clear();
  scopes_.assign(1, {});
  for (uint32_t i = 0; i < tmpl::kNumInputSlots; ++i)
    scopes_[0][tmpl::kInputNames[i]] = i;
  num_slots_ = tmpl::kNumInputSlots;
  EMBER_RETURN_IF_ERROR(Statements(body));
  if (num_slots_ > tmpl::kMaxSlots || max_depth_ > static_cast<int>(tmpl::kMaxStack) ||
      max_loops_ > static_cast<int>(tmpl::kMaxLoops)) {
    return InvalidArgument(
        "chat template too large: %u variables, %d stack values, %d nested loops "
        "(at most %u, %u, %u)",
        num_slots_, max_depth_, max_loops_, tmpl::kMaxSlots, tmpl::kMaxStack,
        tmpl::kMaxLoops);
  }
  program->num_slots = num_slots_;
  program->max_stack = static_cast<uint32_t>(max_depth_);
  program->max_loops = static_cast<uint32_t>(max_loops_);
  return Status::Ok();
}

Status Compile(const Body& body, ChatProgramSpec* program) {
  Compiler compiler;
  return compiler.Run(body, program);
}

}  // namespace ember::tools::jinja
