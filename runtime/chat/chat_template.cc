// ChatTemplate: the program's checks at load, and the render's inputs.
#include "runtime/chat/chat_template.h"

#include <cstring>
#include <utility>
#include <vector>

#include "runtime/chat/chat_template_format.h"
#include "runtime/chat/template_ops.h"
#include "runtime/chat/tool_calls.h"

namespace ember {

using tmpl::Op;

Status ChatTemplate::Init(const ChatProgramTables& t, uint32_t vocab_size) {
  t_ = ChatProgramTables();
  if (t.code_size == 0) return Status::Ok();  // no template
  if (t.format_version < tmpl::kOldestFormatVersion ||
      t.format_version > tmpl::kFormatVersion) {
    return InvalidModel(
        "chat template: bytecode version %u (this build runs versions %u to %u): "
        "convert the model again",
        t.format_version, tmpl::kOldestFormatVersion, tmpl::kFormatVersion);
  }
  const uint32_t num_inputs = tmpl::NumInputSlots(t.format_version);
  // No string bytes is fine when every string is empty ({{ '' }}): null then.
  if (!t.code || !t.string_offsets || (t.string_bytes_size && !t.string_bytes)) {
    return InvalidModel("chat template: code or constants missing");
  }
  if (t.string_offsets[0] != 0 ||
      t.string_offsets[t.num_strings] != t.string_bytes_size) {
    return InvalidModel("chat template: string offsets do not span the string bytes");
  }
  for (size_t i = 0; i < t.num_strings; ++i) {
    if (t.string_offsets[i + 1] < t.string_offsets[i]) {
      return InvalidModel("chat template: string offsets decrease at %zu", i);
    }
  }
  if (t.num_slots < num_inputs || t.num_slots > tmpl::kMaxSlots ||
      t.max_stack > tmpl::kMaxStack || t.max_loops > tmpl::kMaxLoops) {
    return InvalidModel(
        "chat template: %u variables, stack %u, %u loops (limits %u-%u, "
        "%u, %u)",
        t.num_slots, t.max_stack, t.max_loops, num_inputs, tmpl::kMaxSlots,
        tmpl::kMaxStack, tmpl::kMaxLoops);
  }
  for (size_t i = 0; i < t.num_end_of_turn_ids; ++i) {
    const int32_t id = t.end_of_turn_ids[i];
    if (id < 0 || static_cast<uint32_t>(id) >= vocab_size) {
      return InvalidModel("chat template: token %d outside the vocabulary of %u", id,
                          vocab_size);
    }
  }
  // Every instruction: a known opcode, whole operands, each in range; then every jump
  // lands on an instruction.
  std::vector<bool> starts(t.code_size + 1, false);
  std::vector<std::pair<size_t, uint32_t>> jumps;  // (at, target)
  size_t pc = 0;
  while (pc < t.code_size) {
    starts[pc] = true;
    const uint8_t byte = t.code[pc];
    if (byte >= static_cast<uint8_t>(Op::kNumOps)) {
      return InvalidModel("chat template: unknown instruction %u at %zu", byte, pc);
    }
    const Op op = static_cast<Op>(byte);
    const size_t operands = tmpl::kOperandCount[byte];
    if (t.code_size - pc - 1 < 4 * operands) {
      return InvalidModel("chat template: instruction at %zu runs past the code", pc);
    }
    uint32_t a = 0, b = 0;
    if (operands > 0) memcpy(&a, t.code + pc + 1, 4);
    if (operands > 1) memcpy(&b, t.code + pc + 5, 4);
    bool ok = true;
    switch (op) {
      case Op::kText:
      case Op::kPushString:
      case Op::kGetAttr:
      case Op::kSetAttr:
        ok = a < t.num_strings;
        break;
      case Op::kPushFloat:
        ok = a < t.num_floats;
        break;
      case Op::kPushConstant:
        ok = a <= static_cast<uint32_t>(tmpl::Constant::kFalse);
        break;
      case Op::kLoad:
      case Op::kStore:
        ok = a < t.num_slots;
        break;
      case Op::kCopy:
        ok = a < t.num_slots && b < t.num_slots;
        break;
      case Op::kSlice:
        ok = a < 8;
        break;
      case Op::kUnary:
        ok = a <= static_cast<uint32_t>(tmpl::UnaryOp::kPlus);
        break;
      case Op::kBinary:
        ok = a < static_cast<uint32_t>(tmpl::BinaryOp::kNumOps);
        break;
      case Op::kLoopAttr:
        ok = a < static_cast<uint32_t>(tmpl::LoopAttr::kNumAttrs);
        break;
      case Op::kFilter:
        ok = a < static_cast<uint32_t>(tmpl::Filter::kNumFilters) &&
             b <= tmpl::kFilters[a].max_args;
        break;
      case Op::kTest:
        ok = a < static_cast<uint32_t>(tmpl::Test::kNumTests) &&
             b <= tmpl::kTests[a].max_args;
        break;
      case Op::kMethod:
        ok = a < static_cast<uint32_t>(tmpl::Method::kNumMethods) &&
             b <= tmpl::kMethods[a].max_args;
        break;
      case Op::kCall:
        ok = a < static_cast<uint32_t>(tmpl::Function::kNumFunctions) &&
             b <= tmpl::kFunctions[a].max_args;
        break;
      case Op::kUnpack:
      case Op::kBuildList:
      case Op::kBuildDict:
      case Op::kNamespace:
        ok = a <= tmpl::kMaxStack;
        break;
      case Op::kJump:
      case Op::kJumpIfFalse:
      case Op::kJumpIfFalseElsePop:
      case Op::kJumpIfTrueElsePop:
      case Op::kIterNext:
      case Op::kIterEndElse:
        jumps.emplace_back(pc, a);
        break;
      default:
        break;
    }
    if (!ok)
      return InvalidModel("chat template: bad operand of instruction %u at %zu", byte,
                          pc);
    pc += 1 + 4 * operands;
  }
  starts[t.code_size] = true;  // jumping to the end finishes the render
  for (const auto& [at, target] : jumps) {
    if (target > t.code_size || !starts[target]) {
      return InvalidModel("chat template: the jump at %zu lands mid-instruction", at);
    }
  }
  t_ = t;
  tools_in_system_ = DetectToolCallFormat(t_) == ToolCallFormat::kPhi4Mini;
  return Status::Ok();
}

size_t ChatRenderBytes(size_t text_bytes) {
  constexpr size_t kMarkup = 16384;
  constexpr size_t kMaxText = (SIZE_MAX - kMarkup - 7) / 8;  // saturates, never wraps
  if (text_bytes > kMaxText) text_bytes = kMaxText;
  return (8 * text_bytes + kMarkup + 7) & ~size_t{7};
}

namespace {

// A JSON error with what the text was: "tools_json: JSON at byte 7: ...".
Status Within(const Status& s, const char* what, size_t index) {
  if (s.ok() || s.code() != StatusCode::kInvalidArgument) return s;
  if (index == SIZE_MAX) return InvalidArgument("%s: %s", what, s.message());
  return InvalidArgument("message %zu: %s: %s", index, what, s.message());
}

// Message i as a dict: role and content, then the keys of its extra_json (whose role
// or content replace those).
Status MessageDict(const ChatMessage& m, size_t i, tmpl::Heap* heap, tmpl::Value* out) {
  tmpl::Value extra;
  EMBER_RETURN_IF_ERROR(
      Within(tmpl::ParseJson(m.extra_json, heap, &extra), "extra_json", i));
  if (extra.kind != tmpl::Kind::kDict) {
    return InvalidArgument("message %zu: extra_json is not a JSON object", i);
  }
  const tmpl::Dict& keys = *extra.dict;
  *out = tmpl::NewDict(keys.count + 2, tmpl::Kind::kDict, heap);
  if (heap->full()) return tmpl::HeapFull(*heap);
  tmpl::Dict* d = out->dict;
  d->keys[0] = tmpl::Value::String("role");
  d->values[0] = tmpl::Value::String(m.role);
  d->keys[1] = tmpl::Value::String("content");
  d->values[1] = tmpl::Value::String(m.content);
  d->count = 2;
  for (uint32_t k = 0; k < keys.count; ++k) {  // keys are distinct: ParseJson merged them
    const std::string_view key = keys.keys[k].str();
    const uint32_t at = key == "role" ? 0 : key == "content" ? 1 : d->count++;
    d->keys[at] = keys.keys[k];
    d->values[at] = keys.values[k];
  }
  return Status::Ok();
}

// The messages input: a view of the caller's messages when none has extra keys (nothing
// copied), else a list of them with dicts for those that do.
Status MessagesValue(const ChatMessage* messages, size_t n, tmpl::Heap* heap,
                     tmpl::Value* out) {
  bool extra = false;
  for (size_t i = 0; i < n && !extra; ++i) extra = !messages[i].extra_json.empty();
  if (!extra) {
    tmpl::List* list = heap->AllocateArray<tmpl::List>(1);
    if (!list) return tmpl::HeapFull(*heap);
    *list = tmpl::List();
    list->messages = messages;
    list->count = static_cast<uint32_t>(n);
    static const ChatMessage kNone{};
    if (n == 0) list->messages = &kNone;
    out->kind = tmpl::Kind::kList;
    out->list = list;
    return Status::Ok();
  }
  tmpl::Value* items = nullptr;
  *out = tmpl::NewList(static_cast<uint32_t>(n), &items, heap);
  if (heap->full()) return tmpl::HeapFull(*heap);
  for (size_t i = 0; i < n; ++i) {
    if (messages[i].extra_json.empty()) {
      tmpl::Value v;
      v.kind = tmpl::Kind::kMessage;
      v.message = &messages[i];
      items[i] = v;
    } else {
      EMBER_RETURN_IF_ERROR(MessageDict(messages[i], i, heap, &items[i]));
    }
  }
  return Status::Ok();
}

// Phi-4-mini's template takes the tools in the system message, as its model card
// writes them: "tools" holds json.dumps of the functions ([{"name", "description",
// "parameters"}], each definition's "function"). The messages input becomes a list
// whose system message (added first, empty, when there is none) has that key.
Status ToolsInSystemMessage(const tmpl::Value& tools, tmpl::Heap* heap,
                            tmpl::Value* messages) {
  heap->Begin();
  heap->AppendChar('[');
  bool ok = true;
  for (uint32_t i = 0; i < tools.list->count && ok; ++i) {
    if (i) heap->Append(", ");
    const tmpl::Value tool = tools.list->at(i);
    const tmpl::Value function = tmpl::Lookup(tool, "function");
    ok = tmpl::AppendJson(function.kind == tmpl::Kind::kUndefined ? tool : function, -1,
                          0, heap);
  }
  heap->AppendChar(']');
  const tmpl::Value text = heap->End();
  if (heap->full()) return tmpl::HeapFull(*heap);
  if (!ok) return InvalidArgument("tools_json: a tool JSON cannot hold");

  const tmpl::List& old = *messages->list;
  const tmpl::Value role =
      old.count > 0 ? tmpl::Lookup(old.at(0), "role") : tmpl::Value::None();
  const bool has_system = role.is_string() && role.str() == "system";
  tmpl::Value* items = nullptr;
  const tmpl::Value list = tmpl::NewList(old.count + (has_system ? 0 : 1), &items, heap);
  if (heap->full()) return tmpl::HeapFull(*heap);
  const uint32_t shift = has_system ? 0 : 1;
  for (uint32_t i = 0; i < old.count; ++i) items[i + shift] = old.at(i);
  // The system message as a dict of its keys and "tools".
  const tmpl::Value first = has_system ? items[0] : tmpl::Value::None();
  const uint32_t keys = has_system ? tmpl::MappingSize(first) : 0;
  tmpl::Value system = tmpl::NewDict(keys + 3, tmpl::Kind::kDict, heap);
  if (heap->full()) return tmpl::HeapFull(*heap);
  if (!has_system) {
    EMBER_RETURN_IF_ERROR(tmpl::SetKey(system.dict, tmpl::Value::String("role"),
                                       tmpl::Value::String("system"), heap));
    EMBER_RETURN_IF_ERROR(tmpl::SetKey(system.dict, tmpl::Value::String("content"),
                                       tmpl::Value::String(""), heap));
  }
  for (uint32_t k = 0; k < keys; ++k) {
    EMBER_RETURN_IF_ERROR(tmpl::SetKey(system.dict, tmpl::MappingKey(first, k),
                                       tmpl::MappingValue(first, k), heap));
  }
  EMBER_RETURN_IF_ERROR(
      tmpl::SetKey(system.dict, tmpl::Value::String("tools"), text, heap));
  items[0] = system;
  *messages = list;
  return Status::Ok();
}

}  // namespace

Status ChatTemplate::Render(const ChatMessage* messages, size_t n,
                            const ChatTemplateOptions& options, char* buffer,
                            size_t capacity, size_t* length) const {
  *length = 0;
  if (empty()) return NotFound("the model has no compiled chat template");
  if (n > UINT32_MAX / 2) return InvalidArgument("too many messages");
  if (!options.tools_json.empty() && t_.format_version < 2) {
    return InvalidArgument(
        "this model's chat template was compiled before tools were supported: convert it "
        "again");
  }
  tmpl::Heap heap(buffer, capacity);
  tmpl::Value inputs[tmpl::kNumInputSlots];
  EMBER_RETURN_IF_ERROR(MessagesValue(messages, n, &heap, &inputs[tmpl::kSlotMessages]));
  inputs[tmpl::kSlotTools] = tmpl::Value::None();
  if (!options.tools_json.empty()) {
    tmpl::Value& tools = inputs[tmpl::kSlotTools];
    EMBER_RETURN_IF_ERROR(Within(tmpl::ParseJson(options.tools_json, &heap, &tools),
                                 "tools_json", SIZE_MAX));
    if (tools.kind != tmpl::Kind::kList && tools.kind != tmpl::Kind::kNone) {
      return InvalidArgument("tools_json: not a JSON array of tool definitions");
    }
    if (tools.kind == tmpl::Kind::kList && tools_in_system_) {
      EMBER_RETURN_IF_ERROR(
          ToolsInSystemMessage(tools, &heap, &inputs[tmpl::kSlotMessages]));
    }
  }
  inputs[tmpl::kSlotAddGenerationPrompt] =
      tmpl::Value::Bool(options.add_generation_prompt);
  const auto text = [](std::string_view s) {
    return s.empty() ? tmpl::Value::Undefined() : tmpl::Value::String(s);
  };
  inputs[tmpl::kSlotBosToken] = text(t_.bos_token);
  inputs[tmpl::kSlotEosToken] = text(t_.eos_token);
  inputs[tmpl::kSlotUnkToken] = text(t_.unk_token);
  inputs[tmpl::kSlotPadToken] = text(t_.pad_token);
  if (options.now_seconds >= 0) {
    inputs[tmpl::kSlotStrftimeNow] = tmpl::Value::Int(options.now_seconds);
  }
  inputs[tmpl::kSlotRaiseException] = tmpl::Value::Bool(true);
  if (options.enable_thinking >= 0) {
    inputs[tmpl::kSlotEnableThinking] = tmpl::Value::Bool(options.enable_thinking != 0);
  }
  EMBER_RETURN_IF_ERROR(tmpl::Run(t_, inputs, options.max_steps, &heap));
  *length = heap.text_bytes();
  return Status::Ok();
}

}  // namespace ember
