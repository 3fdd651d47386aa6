// The sampling options `ember run` and `ember chat` share: temperature, top-k, top-p,
// min-p, the penalties, the seed and stop strings.
#ifndef EMBER_TOOLS_CLI_SAMPLING_FLAGS_H_
#define EMBER_TOOLS_CLI_SAMPLING_FLAGS_H_

#include <vector>

#include "runtime/chat/stop_strings.h"
#include "runtime/sampler.h"
#include "runtime/status.h"
#include "tools/cli/args.h"

namespace ember::tools {

// The options' specs, to append to a subcommand's own.
std::vector<OptionSpec> SamplingFlagSpecs();

// The sampler the flags ask for (the seed from the clock unless -s) and the stop strings
// (--stop, repeatable), checked.
Status ReadSamplingFlags(const ArgParser& args, SamplerOptions* options,
                         StopStrings* stop_strings);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_SAMPLING_FLAGS_H_
