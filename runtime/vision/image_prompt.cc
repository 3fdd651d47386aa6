// Image markers expanded into the image tokens' text (image_prompt.h).
#include "runtime/vision/image_prompt.h"

#include <cstring>

#include "runtime/checked_math.h"

namespace ember {

size_t CountImageMarkers(const ImagePrompt& prompt, std::string_view text) {
  const std::string_view marker = prompt.marker;
  if (marker.empty()) return 0;
  size_t count = 0;
  for (size_t at = text.find(marker); at != std::string_view::npos;
       at = text.find(marker, at + marker.size())) {
    ++count;
  }
  return count;
}

Result<size_t> ExpandedImagePromptBytes(const ImagePrompt& prompt, std::string_view text,
                                        const size_t* rows, size_t images,
                                        UnmarkedImages unmarked) {
  if (prompt.marker.empty()) {
    return InvalidArgument(
        "the model's file has no image prompt (its tokenizer had no image token when it "
        "was converted): it takes images only as rows given to Session::PrefillEmbedded");
  }
  const size_t markers = CountImageMarkers(prompt, text);
  const bool first = markers == 0 && unmarked == UnmarkedImages::kFirst;
  if (markers != images && !first) {
    return InvalidArgument("%zu image%s for %zu '%s' marker%s in the prompt", images,
                           images == 1 ? "" : "s", markers, prompt.marker.c_str(),
                           markers == 1 ? "" : "s");
  }
  size_t total = text.size() - markers * prompt.marker.size();
  const size_t framing = prompt.before.size() + prompt.after.size();
  for (size_t i = 0; i < images; ++i) {
    size_t tokens = 0;
    if (!CheckedMul(rows[i], prompt.token.size(), &tokens) ||
        !CheckedAdd(total, tokens, &total) || !CheckedAdd(total, framing, &total)) {
      return OutOfRange("an image prompt past the address space");
    }
  }
  return total;
}

Status ExpandImagePrompt(const ImagePrompt& prompt, std::string_view text,
                         const size_t* rows, size_t images, char* out, size_t capacity,
                         size_t* length, UnmarkedImages unmarked) {
  Result<size_t> bytes = ExpandedImagePromptBytes(prompt, text, rows, images, unmarked);
  if (!bytes.ok()) return bytes.status();
  if (*bytes > capacity) {
    return OutOfRange("the expanded prompt takes %zu bytes; %zu given", *bytes, capacity);
  }
  size_t n = 0;
  auto put = [&](std::string_view s) {
    if (!s.empty()) memcpy(out + n, s.data(), s.size());
    n += s.size();
  };
  // Without markers (allowed above only with kFirst), the images come first.
  const bool first = CountImageMarkers(prompt, text) == 0;
  const std::string_view marker = prompt.marker;
  size_t from = 0;
  for (size_t i = 0; i < images; ++i) {
    const size_t at = first ? 0 : text.find(marker, from);
    put(std::string_view(text.data() + from, at - from));
    put(prompt.before);
    for (size_t r = 0; r < rows[i]; ++r) put(prompt.token);
    put(prompt.after);
    from = first ? 0 : at + marker.size();
  }
  put(std::string_view(text.data() + from, text.size() - from));
  *length = n;
  return Status::Ok();
}

}  // namespace ember
