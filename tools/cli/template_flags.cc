// The chat template flags (see template_flags.h).
#include "tools/cli/template_flags.h"

#include <cstdint>
#include <ctime>
#include <string>

namespace ember::tools {

std::vector<OptionSpec> TemplateFlagSpecs() {
  return {
      {{"--enable-thinking"},
       true,
       "true or false: sets enable_thinking (Qwen3's templates read it; default: "
       "undefined)"},
      {{"--now"},
       true,
       "seconds since 1970 that strftime_now formats (UTC; default: the clock's; -1: "
       "no clock, strftime_now undefined)"},
  };
}

Status ReadTemplateFlags(const ArgParser& args, ChatTemplateOptions* options) {
  if (args.Has("--enable-thinking")) {
    const std::string v = args.Get("--enable-thinking");
    if (v != "true" && v != "false") {
      return InvalidArgument("--enable-thinking %s: not true or false", v.c_str());
    }
    options->enable_thinking = v == "true";
  }
  return args.GetInt("--now", static_cast<int64_t>(time(nullptr)), -1, INT64_MAX / 2,
                     &options->now_seconds);
}

}  // namespace ember::tools
