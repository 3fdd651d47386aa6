// The sampling flags (see sampling_flags.h).
#include "tools/cli/sampling_flags.h"

#include <chrono>
#include <string>
#include <string_view>

namespace ember::tools {

std::vector<OptionSpec> SamplingFlagSpecs() {
  return {
      {{"--temp"}, true, "temperature; 0 (or below 1e-4) is greedy (default 0.8)"},
      {{"--top-k"}, true, "sample from the K most likely tokens; 0 is off (default 40)"},
      {{"--top-p"},
       true,
       "nucleus sampling threshold in (0, 1]; 1 is off (default 0.95)"},
      {{"--min-p"},
       true,
       "keep tokens at least P times as likely as the most likely one; 0 is off "
       "(default 0)"},
      {{"--repeat-penalty"},
       true,
       "divide positive (multiply negative) logits of recent tokens by this; 1 is off "
       "(default 1)"},
      {{"--repeat-last-n"},
       true,
       "tokens the penalties look back over; 0 is off, -1 the whole context (default "
       "64)"},
      {{"--frequency-penalty"},
       true,
       "subtract this from a recent token's logit per occurrence (default 0)"},
      {{"--presence-penalty"},
       true,
       "subtract this from the logit of a token among the recent ones (default 0)"},
      {{"--stop"},
       true,
       "stop when the generated text contains TEXT (repeatable; TEXT and what follows "
       "are not printed: text that may begin TEXT is held back until it cannot)"},
      {{"-s", "--seed"},
       true,
       "random seed (default: from the clock; printed on stderr when sampling)"},
  };
}

Status ReadSamplingFlags(const ArgParser& args, SamplerOptions* o,
                         StopStrings* stop_strings) {
  int64_t seed, top_k, last_n;
  double temp, top_p, min_p, repeat, frequency, presence;
  const int64_t clock =
      std::chrono::steady_clock::now().time_since_epoch().count() & 0xFFFFFFFF;
  EMBER_RETURN_IF_ERROR(args.GetInt("-s", clock, 0, INT64_MAX, &seed));
  EMBER_RETURN_IF_ERROR(args.GetInt("--top-k", 40, 0, int64_t{1} << 30, &top_k));
  EMBER_RETURN_IF_ERROR(
      args.GetInt("--repeat-last-n", 64, -1, int64_t{1} << 24, &last_n));
  EMBER_RETURN_IF_ERROR(args.GetFloat("--temp", 0.8, 0.0, 100.0, &temp));
  EMBER_RETURN_IF_ERROR(args.GetFloat("--top-p", 0.95, 0.0, 1.0, &top_p));
  EMBER_RETURN_IF_ERROR(args.GetFloat("--min-p", 0.0, 0.0, 1.0, &min_p));
  EMBER_RETURN_IF_ERROR(args.GetFloat("--repeat-penalty", 1.0, 1e-3, 1e3, &repeat));
  EMBER_RETURN_IF_ERROR(args.GetFloat("--frequency-penalty", 0.0, -100, 100, &frequency));
  EMBER_RETURN_IF_ERROR(args.GetFloat("--presence-penalty", 0.0, -100, 100, &presence));
  *o = SamplerOptions();
  o->temperature = static_cast<float>(temp);
  o->top_k = static_cast<uint32_t>(top_k);
  o->top_p = static_cast<float>(top_p);
  o->min_p = static_cast<float>(min_p);
  o->seed = static_cast<uint64_t>(seed);
  o->repeat_penalty = static_cast<float>(repeat);
  o->repeat_last_n = static_cast<int32_t>(last_n);
  o->frequency_penalty = static_cast<float>(frequency);
  o->presence_penalty = static_cast<float>(presence);
  EMBER_RETURN_IF_ERROR(Sampler::CheckOptions(*o));
  const std::vector<std::string> stops = args.GetAll("--stop");
  std::vector<std::string_view> views(stops.begin(), stops.end());
  const Status s = stop_strings->Set(views.data(), views.size());
  if (!s.ok()) return Status(s.code(), "--stop: %s", s.message());
  return Status::Ok();
}

}  // namespace ember::tools
