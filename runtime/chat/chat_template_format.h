// The compiled chat template's bytecode: what tools/template writes into the model file
// and runtime/chat/chat_template.h renders. Ids below are part of the file format: values
// are only appended.
//
// A program is a sequence of instructions, each an opcode byte followed by the operand
// count kOperandCount gives of little-endian uint32 operands. It runs on a stack of
// values (max_stack deep), with num_slots variables and a stack of loop frames
// (max_loops deep). Slots 0 to NumInputSlots(version) - 1 hold the inputs below; the
// others start undefined.
#ifndef EMBER_RUNTIME_CHAT_CHAT_TEMPLATE_FORMAT_H_
#define EMBER_RUNTIME_CHAT_CHAT_TEMPLATE_FORMAT_H_

#include <cstddef>
#include <cstdint>

namespace ember::tmpl {

// Version 2 added the input `tools`; the runtime still renders version 1.
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kOldestFormatVersion = 1;

enum class Op : uint8_t {
  kText = 0,                 // (string): write the string constant
  kPushString = 1,           // (string)
  kPushInt = 2,              // (int32 as uint32)
  kPushFloat = 3,            // (index into the float constants)
  kPushConstant = 4,         // (Constant)
  kLoad = 5,                 // (slot)
  kStore = 6,                // (slot): pops
  kGetAttr = 7,              // (string): pops an object, pushes its attribute
  kGetItem = 8,              // pops key, object; pushes object[key]
  kSlice = 9,                // (bits: 1 start, 2 stop, 4 step given, popped in that order
                             // above the object)
  kUnary = 10,               // (UnaryOp)
  kBinary = 11,              // (BinaryOp): pops right, left
  kJump = 12,                // (target byte offset)
  kJumpIfFalse = 13,         // (target): pops
  kJumpIfFalseElsePop = 14,  // (target): `and`: falsy: keep it, jump; else pop
  kJumpIfTrueElsePop = 15,   // (target): `or`
  kOutput = 16,              // pops, writes its text
  kPop = 17,
  kFilter = 18,       // (Filter, argc): pops argc arguments, then the value
  kTest = 19,         // (Test, argc): pops argc arguments, then the value; pushes a bool
  kCall = 20,         // (Function, argc): pops argc arguments
  kMethod = 21,       // (Method, argc): pops argc arguments, then the object
  kNamespace = 22,    // (n): pops n (name, value) pairs; pushes a namespace
  kSetAttr = 23,      // (string): pops value, then a namespace; sets its attribute
  kBuildList = 24,    // (n): pops n values
  kBuildDict = 25,    // (n): pops n (key, value) pairs
  kIterStart = 26,    // pops an iterable; pushes a loop frame over it
  kIterNext = 27,     // (target): exhausted: jump; else push the next item
  kIterEnd = 28,      // pops the loop frame
  kIterEndElse = 29,  // (target): pops the frame; jumps past the else block if the
                      // loop ran at least once
  kLoopAttr = 30,     // (LoopAttr): of the innermost loop frame
  kCopy = 31,         // (from slot, to slot)
  kUnpack = 32,       // (n): pops a sequence of exactly n items, pushes them in order
  kNewList = 33,      // pushes an empty list with room for the innermost frame's items
  kAppend = 34,       // pops a value, appends it to the list below
  kDup = 35,
  kRaise = 36,  // pops a message: the render fails with it
  kNumOps = 37,
};

// Operand counts by opcode.
inline constexpr uint8_t kOperandCount[static_cast<int>(Op::kNumOps)] = {
    1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 2,
    2, 2, 2, 1, 1, 1, 1, 0, 1, 0, 1, 1, 2, 1, 0, 0, 0, 0};

enum class Constant : uint32_t { kUndefined = 0, kNone = 1, kTrue = 2, kFalse = 3 };

enum class UnaryOp : uint32_t { kNot = 0, kNegate = 1, kPlus = 2 };

enum class BinaryOp : uint32_t {
  kAdd = 0,
  kSubtract = 1,
  kMultiply = 2,
  kDivide = 3,
  kFloorDivide = 4,
  kModulo = 5,
  kPower = 6,
  kConcat = 7,  // ~
  kEqual = 8,
  kNotEqual = 9,
  kLess = 10,
  kLessEqual = 11,
  kGreater = 12,
  kGreaterEqual = 13,
  kIn = 14,
  kNotIn = 15,
  kNumOps = 16,
};

enum class LoopAttr : uint32_t {
  kIndex = 0,
  kIndex0 = 1,
  kRevIndex = 2,
  kRevIndex0 = 3,
  kFirst = 4,
  kLast = 5,
  kLength = 6,
  kPrevItem = 7,
  kNextItem = 8,
  kNumAttrs = 9,
};

// Filters, tests, methods and functions: name, the most arguments after the value (the
// compiler binds keyword arguments to these positions by name), and the parameter
// names. Unfilled positions are passed as undefined.
struct Builtin {
  const char* name;
  uint8_t max_args;
  const char* params[4];
};

enum class Filter : uint32_t {
  kTrim,
  kLength,
  kToJson,
  kString,
  kUpper,
  kLower,
  kFirst,
  kLast,
  kJoin,
  kDefault,
  kList,
  kReverse,
  kSelectAttr,
  kRejectAttr,
  kSelect,
  kReject,
  kMapAttribute,
  kCapitalize,
  kTitle,
  kReplace,
  kInt,
  kFloat,
  kAbs,
  kItems,
  kSafe,
  kCount,
  kNumFilters
};
inline constexpr Builtin kFilters[] = {
    {"trim", 1, {"chars"}},
    {"length", 0, {}},
    {"tojson", 4, {"indent", "ensure_ascii", "separators", "sort_keys"}},
    {"string", 0, {}},
    {"upper", 0, {}},
    {"lower", 0, {}},
    {"first", 0, {}},
    {"last", 0, {}},
    {"join", 2, {"d", "attribute"}},
    {"default", 2, {"default_value", "boolean"}},
    {"list", 0, {}},
    {"reverse", 0, {}},
    {"selectattr", 3, {"attr", "test", "arg"}},
    {"rejectattr", 3, {"attr", "test", "arg"}},
    {"select", 2, {"test", "arg"}},
    {"reject", 2, {"test", "arg"}},
    {"map", 2, {"attribute", "default"}},
    {"capitalize", 0, {}},
    {"title", 0, {}},
    {"replace", 3, {"old", "new", "count"}},
    {"int", 1, {"default"}},
    {"float", 1, {"default"}},
    {"abs", 0, {}},
    {"items", 0, {}},
    {"safe", 0, {}},
    {"count", 0, {}},
};
static_assert(sizeof(kFilters) / sizeof(kFilters[0]) ==
                  static_cast<size_t>(Filter::kNumFilters),
              "one entry per filter");

enum class Test : uint32_t {
  kDefined,
  kUndefined,
  kNone,
  kString,
  kNumber,
  kInteger,
  kFloat,
  kBoolean,
  kTrue,
  kFalse,
  kMapping,
  kIterable,
  kSequence,
  kOdd,
  kEven,
  kDivisibleBy,
  kEqualTo,
  kNotEqualTo,
  kLessThan,
  kGreaterThan,
  kIn,
  kLower,
  kUpper,
  kSameAs,
  kNumTests
};
inline constexpr Builtin kTests[] = {
    {"defined", 0, {}},        {"undefined", 0, {}},
    {"none", 0, {}},           {"string", 0, {}},
    {"number", 0, {}},         {"integer", 0, {}},
    {"float", 0, {}},          {"boolean", 0, {}},
    {"true", 0, {}},           {"false", 0, {}},
    {"mapping", 0, {}},        {"iterable", 0, {}},
    {"sequence", 0, {}},       {"odd", 0, {}},
    {"even", 0, {}},           {"divisibleby", 1, {"num"}},
    {"equalto", 1, {"other"}}, {"ne", 1, {"other"}},
    {"lt", 1, {"other"}},      {"gt", 1, {"other"}},
    {"in", 1, {"seq"}},        {"lower", 0, {}},
    {"upper", 0, {}},          {"sameas", 1, {"other"}},
};
static_assert(sizeof(kTests) / sizeof(kTests[0]) == static_cast<size_t>(Test::kNumTests),
              "one entry per test");

enum class Method : uint32_t {
  kStartsWith,
  kEndsWith,
  kStrip,
  kLStrip,
  kRStrip,
  kSplit,
  kUpper,
  kLower,
  kTitle,
  kCapitalize,
  kReplace,
  kFind,
  kCount,
  kJoin,
  kGet,
  kItems,
  kKeys,
  kValues,
  kNumMethods
};
inline constexpr Builtin kMethods[] = {
    {"startswith", 1, {"prefix"}},
    {"endswith", 1, {"suffix"}},
    {"strip", 1, {"chars"}},
    {"lstrip", 1, {"chars"}},
    {"rstrip", 1, {"chars"}},
    {"split", 2, {"sep", "maxsplit"}},
    {"upper", 0, {}},
    {"lower", 0, {}},
    {"title", 0, {}},
    {"capitalize", 0, {}},
    {"replace", 3, {"old", "new", "count"}},
    {"find", 1, {"sub"}},
    {"count", 1, {"sub"}},
    {"join", 1, {"iterable"}},
    {"get", 2, {"key", "default"}},
    {"items", 0, {}},
    {"keys", 0, {}},
    {"values", 0, {}},
};
static_assert(sizeof(kMethods) / sizeof(kMethods[0]) ==
                  static_cast<size_t>(Method::kNumMethods),
              "one entry per method");

// strftime_now(format) runs as kCall(kStrftimeNow) with the clock (the input slot's
// value: seconds since 1970, UTC) pushed before the format.
enum class Function : uint32_t { kRange, kStrftimeNow, kNumFunctions };
inline constexpr Builtin kFunctions[] = {
    {"range", 3, {"start", "stop", "step"}},
    {"strftime_now", 2, {"now", "format"}},
};

// The inputs, in slots 0 onward: messages (a list of {role, content}), whether to add
// the generation prompt, the tokenizer's special token texts (undefined when empty),
// enable_thinking (undefined unless the caller sets it; Qwen3's templates read it), the
// clock strftime_now reads (undefined without one: Llama 3.2's template then writes its
// own date), raise_exception (defined, for `is defined`), and (version 2 on) tools (a
// list of tool definitions, or None).
enum InputSlot : uint32_t {
  kSlotMessages = 0,
  kSlotAddGenerationPrompt = 1,
  kSlotBosToken = 2,
  kSlotEosToken = 3,
  kSlotUnkToken = 4,
  kSlotPadToken = 5,
  kSlotEnableThinking = 6,
  kSlotStrftimeNow = 7,
  kSlotRaiseException = 8,
  kSlotTools = 9,
  kNumInputSlots = 10,
};
inline constexpr const char* kInputNames[kNumInputSlots] = {
    "messages",  "add_generation_prompt", "bos_token",    "eos_token",       "unk_token",
    "pad_token", "enable_thinking",       "strftime_now", "raise_exception", "tools"};
// A program's input slots: version 1 has the first nine (its slot 9 is a variable).
constexpr uint32_t NumInputSlots(uint32_t format_version) {
  return format_version < 2 ? kSlotTools : kNumInputSlots;
}

// Limits the runtime enforces on a program (and the compiler respects).
inline constexpr uint32_t kMaxStack = 256;
inline constexpr uint32_t kMaxLoops = 16;
inline constexpr uint32_t kMaxSlots = 1024;

}  // namespace ember::tmpl

#endif  // EMBER_RUNTIME_CHAT_CHAT_TEMPLATE_FORMAT_H_
