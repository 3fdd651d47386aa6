// Python's arithmetic on the chat template's numbers, and the int and float filters,
// as Jinja2 computes them. Python's integers are unbounded and the machine's are
// 64-bit: a result that does not fit (2 ** 100000, -(2 ** 63) - 1, int(1e300)) is an
// error naming the operation, never a wrapped value or undefined behaviour. What
// Python itself refuses (0.0 ** -1, int(inf), a complex power) is refused too.
#ifndef EMBER_RUNTIME_CHAT_TEMPLATE_NUMBERS_H_
#define EMBER_RUNTIME_CHAT_TEMPLATE_NUMBERS_H_

#include "runtime/chat/chat_template_format.h"
#include "runtime/chat/template_value.h"
#include "runtime/status.h"

namespace ember::tmpl {

// a op b for two numbers (ints, bools or floats) and op one of + - * / // % **.
Status NumberBinary(BinaryOp op, const Value& a, const Value& b, Value* out);
// -v and abs(v) of a number.
Status Negate(const Value& v, Value* out);
Status Abs(const Value& v, Value* out);
// Jinja2's int and float filters: the number `value` reads as, or `fallback` when
// Python's int()/float() would not read it.
Status IntFilter(const Value& value, const Value& fallback, Value* out);
Status FloatFilter(const Value& value, const Value& fallback, Value* out);

}  // namespace ember::tmpl

#endif  // EMBER_RUNTIME_CHAT_TEMPLATE_NUMBERS_H_
