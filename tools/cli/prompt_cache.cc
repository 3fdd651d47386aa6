// `ember run --prompt-cache` (see prompt_cache.h).
#include "tools/cli/prompt_cache.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "runtime/chat/prompt_state.h"
#include "runtime/model/atomic_file.h"
#include "tools/util/files.h"

namespace ember::tools {
namespace {

// What every prompt state starts with: prompt_state.cc's magic (chat_cli_test's second
// run, which must reuse the first one's cache, fails if the two ever differ).
constexpr char kPromptStateMagic[8] = {'E', 'M', 'B', 'R', 'S', 'T', 'A', 'T'};

// The existing cache file mapped (none: `file` stays empty), or why it must not be
// replaced: a file that is not a prompt state is someone's data (a model, a text), which
// the save would destroy. An empty file holds nothing to lose. The file is mapped, not
// read: a model named by mistake may be gigabytes.
Status MapCacheFile(const std::string& path, MappedFile* file) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return IoError("cannot use prompt cache '%s': %s", path.c_str(), strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return InvalidArgument("refusing to use '%s' as a prompt cache: not a regular file",
                           path.c_str());
  }
  EMBER_RETURN_IF_ERROR(file->Map(path));
  if (file->size() > 0 &&
      (file->size() < sizeof(kPromptStateMagic) ||
       memcmp(file->data(), kPromptStateMagic, sizeof(kPromptStateMagic)) != 0)) {
    return InvalidArgument(
        "refusing to replace '%s' with a prompt cache: it is not an ember prompt state "
        "(choose another file, or remove it)",
        path.c_str());
  }
  return Status::Ok();
}

}  // namespace

Status CheckPromptCacheFile(const std::string& path, const std::string& model_path) {
  EMBER_RETURN_IF_ERROR(CheckNotSameFile(path, model_path, "model"));
  MappedFile file;
  return MapCacheFile(path, &file);
}

Status PrefillWithPromptCache(const std::string& path, Session* session,
                              const int32_t* prompt, size_t n, size_t* reused) {
  *reused = 0;
  const size_t want = n > 0 ? n - 1 : 0;  // the last token is generation's
  MappedFile file;
  EMBER_RETURN_IF_ERROR(MapCacheFile(path, &file));
  if (file.size() > 0) {
    PromptStateInfo info;
    Status s = PeekPromptState(file.data(), file.size(), &info);
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
      s = RestorePromptState(session, nullptr, file.data(), file.size(), common);
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
