// The chat template options `ember template` and `ember chat` share: enable_thinking and
// the clock strftime_now reads.
#ifndef EMBER_TOOLS_CLI_TEMPLATE_FLAGS_H_
#define EMBER_TOOLS_CLI_TEMPLATE_FLAGS_H_

#include <vector>

#include "runtime/chat/chat_template.h"
#include "runtime/status.h"
#include "tools/cli/args.h"

namespace ember::tools {

// The options' specs, to append to a subcommand's own.
std::vector<OptionSpec> TemplateFlagSpecs();

// --enable-thinking and --now (default: the system clock) into *options, checked.
Status ReadTemplateFlags(const ArgParser& args, ChatTemplateOptions* options);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_TEMPLATE_FLAGS_H_
