// Jinja compiler: a chat template's syntax tree -> the bytecode the runtime renders
// (runtime/chat/chat_template_format.h), with every name resolved to a variable slot and
// every filter, test, method and function to its id. What the runtime cannot run is
// refused here, with its name and line.
#ifndef EMBER_TOOLS_TEMPLATE_JINJA_COMPILER_H_
#define EMBER_TOOLS_TEMPLATE_JINJA_COMPILER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"
#include "tools/template/jinja_ast.h"

namespace ember::tools::jinja {

// Compiles a parsed template into program's code, constants and sizes (the other fields
// of ChatProgramSpec are left as they are).
Status Compile(const Body& body, ChatProgramSpec* program);

}  // namespace ember::tools::jinja

#endif  // EMBER_TOOLS_TEMPLATE_JINJA_COMPILER_H_
