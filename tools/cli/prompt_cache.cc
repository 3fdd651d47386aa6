// `ember run --prompt-cache` (see prompt_cache.h).
#include "tools/cli/prompt_cache.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "runtime/chat/prompt_state.h"
#include "runtime/model/atomic_file.h"
#include "tools/util/files.h"

namespace ember::tools {

Status PrefillWithPromptCache(const std::string& path, Session* session,
                              const int32_t* prompt, size_t n, size_t* reused) {
  *reused = 0;
  const size_t want = n > 0 ? n - 1 : 0;  // the last token is generation's
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    std::vector<uint8_t> bytes;
    EMBER_RETURN_IF_ERROR(ReadFile(path, &bytes));
    PromptStateInfo info;
    Status s = PeekPromptState(bytes.data(), bytes.size(), &info);
    size_t common = 0;
    if (s.ok()) {
      while (common < info.position && common < want) {
        int32_t t;
        memcpy(&t, info.tokens + common, sizeof(t));
        if (t != prompt[common]) break;
        ++common;
      }
      if (common == 0) s = InvalidArgument("it holds another prompt");
    }
    if (s.ok())
      s = RestorePromptState(session, nullptr, bytes.data(), bytes.size(), common);
    if (s.ok()) {
      *reused = common;
    } else {
      session->Reset();
      fprintf(stderr, "ember run: prompt cache %s not used: %s\n", path.c_str(),
              s.message());
    }
  }
  if (want > *reused)
    EMBER_RETURN_IF_ERROR(session->Prefill(prompt + *reused, want - *reused));
  if (want > *reused) {
    std::vector<uint8_t> state(PromptStateBytes(*session));
    size_t size = 0;
    EMBER_RETURN_IF_ERROR(
        SavePromptState(*session, nullptr, state.data(), state.size(), &size));
    EMBER_RETURN_IF_ERROR(WriteFileAtomic(path, state.data(), size));
  }
  return Status::Ok();
}

}  // namespace ember::tools
