// The chat template machine: a stack machine over the checked bytecode (see
// chat_template_format.h), its stack, variables and loop frames in the render's heap.
// Every step is bounded: loops walk finite lists, and a step budget stops anything else.
#include <cstring>

#include "runtime/chat/chat_template.h"
#include "runtime/chat/chat_template_format.h"
#include "runtime/chat/template_ops.h"

namespace ember::tmpl {
namespace {

// Far more than any chat template needs (Qwen3's renders 4,000 messages well within
// it); a corrupt or hostile program stops here instead of running for minutes.
constexpr uint64_t kDefaultMaxSteps = uint64_t{1} << 24;

struct Frame {
  Value list;         // kList
  uint32_t next = 0;  // index of the next item
};

class Machine {
 public:
  Machine(const ChatProgramTables& p, uint64_t max_steps, Heap* heap)
      : p_(p), max_steps_(max_steps ? max_steps : kDefaultMaxSteps), heap_(heap) {}

  Status Run(const Value* inputs) {
    stack_ = heap_->AllocateArray<Value>(p_.max_stack + 1);
    slots_ = heap_->AllocateArray<Value>(p_.num_slots);
    frames_ = heap_->AllocateArray<Frame>(p_.max_loops + 1);
    if (!stack_ || !slots_ || !frames_) return HeapFull(*heap_);
    for (uint32_t i = 0; i < p_.num_slots; ++i) slots_[i] = Value();
    // A version-1 program's slot 9 is one of its variables, not `tools`.
    const uint32_t num_inputs = NumInputSlots(p_.format_version);
    for (uint32_t i = 0; i < num_inputs; ++i) slots_[i] = inputs[i];
    size_t pc = 0;
    for (uint64_t steps = 0; pc < p_.code_size; ++steps) {
      if (steps == max_steps_) {
        return ResourceExhausted("chat template: more than %llu steps (a runaway loop?)",
                               static_cast<unsigned long long>(max_steps_));
      }
      const Op op = static_cast<Op>(p_.code[pc]);
      uint32_t a = 0, b = 0;
      const int operands = kOperandCount[static_cast<int>(op)];
      if (operands > 0) memcpy(&a, p_.code + pc + 1, 4);
      if (operands > 1) memcpy(&b, p_.code + pc + 5, 4);
      pc += 1 + 4 * static_cast<size_t>(operands);
      EMBER_RETURN_IF_ERROR(Step(op, a, b, &pc));
      if (heap_->full()) return HeapFull(*heap_);
    }
    return Status::Ok();
  }

 private:
  Status Corrupt() const { return InvalidModel("chat template: corrupt program"); }
  Status Push(const Value& v) {
    if (sp_ > p_.max_stack) return Corrupt();
    stack_[sp_++] = v;
    return Status::Ok();
  }
  Status Pop(Value* v) {
    if (sp_ == 0) return Corrupt();
    *v = stack_[--sp_];
    return Status::Ok();
  }
  // The top n values, popped (args[0] deepest).
  Status PopN(uint32_t n, Value** args) {
    if (n > sp_) return Corrupt();
    sp_ -= n;
    *args = stack_ + sp_;
    return Status::Ok();
  }
  std::string_view String(uint32_t i) const {
    const uint32_t from = p_.string_offsets[i], to = p_.string_offsets[i + 1];
    return {reinterpret_cast<const char*>(p_.string_bytes) + from, to - from};
  }
  Frame* Top() { return fp_ ? &frames_[fp_ - 1] : nullptr; }

  // A string just made and written out by the next instruction (`{{ tool | tojson }}`)
  // is written now and its scratch given back: a template writing every tool as JSON
  // then holds each in scratch only while it writes it.
  Status PushOrWrite(const Value& r, size_t mark, size_t* pc) {
    if (!r.is_string() || *pc >= p_.code_size ||
        p_.code[*pc] != static_cast<uint8_t>(Op::kOutput)) {
      return Push(r);
    }
    heap_->Write(r.str());
    heap_->Pop(mark, r);
    *pc += 1;  // the kOutput, done
    return Status::Ok();
  }

  Status Step(Op op, uint32_t a, uint32_t b, size_t* pc) {
    Value x, y, r;
    Value* args = nullptr;
    switch (op) {
      case Op::kText:
        heap_->Write(String(a));
        return Status::Ok();
      case Op::kPushString:
        return Push(Value::String(String(a)));
      case Op::kPushInt:
        return Push(Value::Int(static_cast<int32_t>(a)));
      case Op::kPushFloat:
        return Push(Value::Float(p_.floats[a]));
      case Op::kPushConstant:
        r = a == static_cast<uint32_t>(Constant::kNone)    ? Value::None()
            : a == static_cast<uint32_t>(Constant::kTrue)  ? Value::Bool(true)
            : a == static_cast<uint32_t>(Constant::kFalse) ? Value::Bool(false)
                                                           : Value::Undefined();
        return Push(r);
      case Op::kLoad:
        return Push(slots_[a]);
      case Op::kStore:
        return Pop(&slots_[a]);
      case Op::kCopy:
        slots_[b] = slots_[a];
        return Status::Ok();
      case Op::kGetAttr:
        EMBER_RETURN_IF_ERROR(Pop(&x));
        EMBER_RETURN_IF_ERROR(GetAttr(x, String(a), &r));
        return Push(r);
      case Op::kGetItem:
        EMBER_RETURN_IF_ERROR(Pop(&y));
        EMBER_RETURN_IF_ERROR(Pop(&x));
        EMBER_RETURN_IF_ERROR(GetItem(x, y, heap_, &r));
        return Push(r);
      case Op::kSlice: {
        Value bounds[3];
        for (int i = 2; i >= 0; --i) {
          if (a & (1u << i)) EMBER_RETURN_IF_ERROR(Pop(&bounds[i]));
        }
        EMBER_RETURN_IF_ERROR(Pop(&x));
        EMBER_RETURN_IF_ERROR(Slice(x, bounds[0], bounds[1], bounds[2], heap_, &r));
        return Push(r);
      }
      case Op::kUnary:
        EMBER_RETURN_IF_ERROR(Pop(&x));
        EMBER_RETURN_IF_ERROR(ApplyUnary(static_cast<UnaryOp>(a), x, &r));
        return Push(r);
      case Op::kBinary: {
        const size_t mark = heap_->Mark();
        EMBER_RETURN_IF_ERROR(Pop(&y));
        EMBER_RETURN_IF_ERROR(Pop(&x));
        EMBER_RETURN_IF_ERROR(ApplyBinary(static_cast<BinaryOp>(a), x, y, heap_, &r));
        return PushOrWrite(r, mark, pc);
      }
      case Op::kJump:
        *pc = a;
        return Status::Ok();
      case Op::kJumpIfFalse:
        EMBER_RETURN_IF_ERROR(Pop(&x));
        if (!Truthy(x)) *pc = a;
        return Status::Ok();
      case Op::kJumpIfFalseElsePop:
      case Op::kJumpIfTrueElsePop:
        if (sp_ == 0) return Corrupt();
        if (Truthy(stack_[sp_ - 1]) == (op == Op::kJumpIfTrueElsePop)) {
          *pc = a;
        } else {
          --sp_;
        }
        return Status::Ok();
      case Op::kOutput:
        EMBER_RETURN_IF_ERROR(Pop(&x));
        if (x.is_string()) {
          heap_->Write(x.str());
        } else {
          heap_->Begin();
          AppendStr(x, heap_);
          heap_->EndAsText();
        }
        return Status::Ok();
      case Op::kPop:
        return Pop(&x);
      case Op::kDup:
        if (sp_ == 0) return Corrupt();
        return Push(stack_[sp_ - 1]);
      case Op::kFilter: {
        const size_t mark = heap_->Mark();
        EMBER_RETURN_IF_ERROR(PopN(b, &args));
        EMBER_RETURN_IF_ERROR(Pop(&x));
        EMBER_RETURN_IF_ERROR(ApplyFilter(static_cast<Filter>(a), x, args, b, heap_, &r));
        return PushOrWrite(r, mark, pc);
      }
      case Op::kTest: {
        EMBER_RETURN_IF_ERROR(PopN(b, &args));
        EMBER_RETURN_IF_ERROR(Pop(&x));
        bool pass;
        EMBER_RETURN_IF_ERROR(ApplyTest(static_cast<Test>(a), x, args, b, &pass));
        return Push(Value::Bool(pass));
      }
      case Op::kCall:
        EMBER_RETURN_IF_ERROR(PopN(b, &args));
        EMBER_RETURN_IF_ERROR(CallFunction(static_cast<Function>(a), args, b, heap_, &r));
        return Push(r);
      case Op::kMethod:
        EMBER_RETURN_IF_ERROR(PopN(b, &args));
        EMBER_RETURN_IF_ERROR(Pop(&x));
        EMBER_RETURN_IF_ERROR(CallMethod(static_cast<Method>(a), x, args, b, heap_, &r));
        return Push(r);
      case Op::kNamespace:
      case Op::kBuildDict: {
        if (a > p_.max_stack) return Corrupt();
        EMBER_RETURN_IF_ERROR(PopN(2 * a, &args));
        const bool ns = op == Op::kNamespace;
        r = NewDict(ns ? a + 4 : a, ns ? Kind::kNamespace : Kind::kDict, heap_);
        if (heap_->full()) return HeapFull(*heap_);
        for (uint32_t i = 0; i < a; ++i) {
          EMBER_RETURN_IF_ERROR(SetKey(r.dict, args[2 * i], args[2 * i + 1], heap_));
        }
        return Push(r);
      }
      case Op::kSetAttr:
        EMBER_RETURN_IF_ERROR(Pop(&y));
        EMBER_RETURN_IF_ERROR(Pop(&x));
        if (x.kind != Kind::kNamespace) {
          return InvalidArgument(
              "chat template: `set x.%.*s = ...` needs x to be a "
              "namespace()",
              static_cast<int>(String(a).size()), String(a).data());
        }
        return SetKey(x.dict, Value::String(String(a)), y, heap_);
      case Op::kBuildList: {
        EMBER_RETURN_IF_ERROR(PopN(a, &args));
        Value* items;
        r = NewList(a, &items, heap_);
        if (heap_->full()) return HeapFull(*heap_);
        for (uint32_t i = 0; i < a; ++i) items[i] = args[i];
        return Push(r);
      }
      case Op::kIterStart:
        if (fp_ > p_.max_loops) return Corrupt();
        EMBER_RETURN_IF_ERROR(Pop(&x));
        EMBER_RETURN_IF_ERROR(Iterable(x, heap_, &frames_[fp_].list));
        frames_[fp_++].next = 0;
        return Status::Ok();
      case Op::kIterNext: {
        Frame* f = Top();
        if (!f) return Corrupt();
        if (f->next >= f->list.list->count) {
          *pc = a;
          return Status::Ok();
        }
        return Push(f->list.list->at(f->next++));
      }
      case Op::kIterEnd:
      case Op::kIterEndElse: {
        if (fp_ == 0) return Corrupt();
        const bool ran = frames_[--fp_].next > 0;
        if (op == Op::kIterEndElse && ran) *pc = a;
        return Status::Ok();
      }
      case Op::kLoopAttr:
        return LoopAttribute(static_cast<LoopAttr>(a));
      case Op::kUnpack: {
        EMBER_RETURN_IF_ERROR(Pop(&x));
        if (x.kind != Kind::kList || x.list->count != a) {
          return InvalidArgument("chat template: cannot unpack into %u loop variables",
                                 a);
        }
        for (uint32_t i = 0; i < a; ++i) EMBER_RETURN_IF_ERROR(Push(x.list->at(i)));
        return Status::Ok();
      }
      case Op::kNewList: {
        Frame* f = Top();
        if (!f) return Corrupt();
        Value* items;
        r = NewList(f->list.list->count, &items, heap_);
        if (heap_->full()) return HeapFull(*heap_);
        const_cast<List*>(r.list)->count = 0;
        return Push(r);
      }
      case Op::kAppend: {
        EMBER_RETURN_IF_ERROR(Pop(&x));
        if (sp_ == 0 || stack_[sp_ - 1].kind != Kind::kList) return Corrupt();
        List* list = const_cast<List*>(stack_[sp_ - 1].list);
        Frame* f = Top();
        if (!f || list->count >= f->list.list->count || !list->values) return Corrupt();
        const_cast<Value*>(list->values)[list->count++] = x;
        return Status::Ok();
      }
      case Op::kRaise: {
        EMBER_RETURN_IF_ERROR(Pop(&x));
        const std::string_view message = x.is_string() ? x.str() : "(no message)";
        return InvalidArgument("chat template: %.*s", static_cast<int>(message.size()),
                               message.data());
      }
      case Op::kNumOps:
        break;
    }
    return Corrupt();
  }

  Status LoopAttribute(LoopAttr attr) {
    const Frame* f = Top();
    if (!f || f->next == 0) return Corrupt();
    const uint32_t i = f->next - 1, n = f->list.list->count;
    switch (attr) {
      case LoopAttr::kIndex:
        return Push(Value::Int(i + 1));
      case LoopAttr::kIndex0:
        return Push(Value::Int(i));
      case LoopAttr::kRevIndex:
        return Push(Value::Int(n - i));
      case LoopAttr::kRevIndex0:
        return Push(Value::Int(n - i - 1));
      case LoopAttr::kFirst:
        return Push(Value::Bool(i == 0));
      case LoopAttr::kLast:
        return Push(Value::Bool(i + 1 == n));
      case LoopAttr::kLength:
        return Push(Value::Int(n));
      case LoopAttr::kPrevItem:
        return Push(i > 0 ? f->list.list->at(i - 1) : Value());
      case LoopAttr::kNextItem:
        return Push(i + 1 < n ? f->list.list->at(i + 1) : Value());
      case LoopAttr::kNumAttrs:
        break;
    }
    return Corrupt();
  }

  const ChatProgramTables& p_;
  const uint64_t max_steps_;
  Heap* heap_;
  Value* stack_ = nullptr;
  uint32_t sp_ = 0;
  Value* slots_ = nullptr;
  Frame* frames_ = nullptr;
  uint32_t fp_ = 0;
};

}  // namespace

Status Run(const ChatProgramTables& program, const Value* inputs, uint64_t max_steps,
           Heap* heap) {
  return Machine(program, max_steps, heap).Run(inputs);
}

}  // namespace ember::tmpl
