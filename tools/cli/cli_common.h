// What every `ember` subcommand shares: the wrapper that parses its options, prints its
// --help and reports its error, the session options several take (--backend, --kv-type,
// --context-shift), and reading a prompt's tokens from -p or --tokens.
#ifndef EMBER_TOOLS_CLI_CLI_COMMON_H_
#define EMBER_TOOLS_CLI_CLI_COMMON_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/model/loaded_tokenizer.h"
#include "runtime/model/model.h"
#include "runtime/session_plan.h"
#include "runtime/status.h"
#include "runtime/pool/thread_pool.h"
#include "tools/cli/args.h"

namespace ember::tools {

// Parses argv[1, argc) with `parser`. With -h/--help prints `usage` (lines ending in a
// newline) and the options to stdout and returns 0; otherwise runs `body` and returns
// its exit code: 0, or 1 after printing "ember NAME: message" to stderr.
using CommandBody = Status (*)(const ArgParser& args);
int RunSubcommand(const char* name, const char* usage, ArgParser parser, int argc,
                  char** argv, CommandBody body);

// Fails when the existing file `output` is one of `inputs` (by device and inode: under
// another name or a link too), naming it as `what` ("model", "input"): a command must
// never replace, append to or draw over a file it reads. "-" (stdout) never is one.
Status CheckNotAnInput(const std::string& output, const std::vector<std::string>& inputs,
                       const char* what);

// The --backend option: "highway" (the default) or "xnnpack".
inline constexpr const char* kBackendHelp =
    "what runs the f32 weight matrices: highway (default) or xnnpack (XNNPACK's "
    "fully-connected operators, with a packed copy of those weights in the arena)";
Status ParseBackend(const std::string& name, Backend* backend);

// The --isa option's help: the ISA tiers of this build (SessionOptions::isa).
const char* IsaHelp();
// The long-context options. --kv-type T (run, chat, bench, logits, inspect): what the KV
// cache stores. --context-shift and --keep N (run, chat): go on past a full context.
OptionSpec KvTypeOption();
std::vector<OptionSpec> ContextShiftOptions();
// "f32", "f16" or "q8" (a clear error otherwise).
Status ParseKvType(const std::string& name, KvType* type);
// --kv-type, f32 when not given.
Status ParseKvTypeOption(const ArgParser& args, KvType* type);
// --context-shift and --keep into options->context_shift and context_keep.
Status ParseContextShiftOptions(const ArgParser& args, SessionOptions* options);

// --fixed-threads (run, chat, logits, attn, bench): every region on all -t threads; by
// default the pool runs on fewer for a while when its threads do not each have a core.
OptionSpec FixedThreadsOption();
// A pool of `threads` threads, its policy as --fixed-threads says.
Result<std::unique_ptr<ThreadPool>> CreatePool(const ArgParser& args, int64_t threads);

// The tokenizer -m MODEL or --tokenizer DIR names (exactly one of them): the model's
// (kept open in *model) or a Hugging Face directory's (read into *loaded, as `ember
// convert --hf` reads it).
Status OpenTokenizer(const ArgParser& args, std::unique_ptr<Model>* model,
                     LoadedTokenizer* loaded, const Tokenizer** tokenizer);

// Encodes `text` with the model's tokenizer (BOS first when add_bos). With a context,
// text of more than 8 bytes a position (a session's default max_prompt_bytes) is
// refused before any work; 0: no limit.
Status EncodeText(const Model& model, const std::string& text, bool add_bos,
                  size_t context, std::vector<int32_t>* ids);
// Encodes `text` with `tokenizer` into a buffer of its EncodeCapacity, then trims it.
Status EncodeWith(const Tokenizer& tokenizer, const std::string& text,
                  const EncodeOptions& options, std::vector<int32_t>* ids);

// The texts of -p (repeatable) then of --file (one a line; empty lines and a line's
// final \r dropped), in order (embed, rerank).
Status ReadTexts(const ArgParser& args, std::vector<std::string>* texts);

// A parser of -m MODEL and the prompt's options, which ReadPromptTokens reads (-p,
// --tokens, --no-bos), then `more`.
ArgParser ArgParserWithModelAndPrompt(std::vector<OptionSpec> more);

// Exactly one of -p and --tokens was given (checked before loading anything).
Status CheckPromptOptions(const ArgParser& args);

// The tokens of the prompt the options give: -p TEXT (tokenized as `ember tokenize`
// does; --no-bos leaves out the BOS the tokenizer would add) or --tokens 1,2,3 (each in
// the vocabulary). Exactly one of the two; the result is never empty and fits the
// model's context.
Status ReadPromptTokens(const ArgParser& args, const Model& model,
                        std::vector<int32_t>* tokens);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_CLI_COMMON_H_
