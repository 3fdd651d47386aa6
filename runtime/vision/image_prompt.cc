// Image markers expanded into the image tokens' text (image_prompt.h).
#include "runtime/vision/image_prompt.h"

#include <cstdio>
#include <cstring>

#include "runtime/checked_math.h"

namespace ember {

namespace {

// Counts the expanded text's bytes (out null), or writes them.
class PromptWriter {
 public:
  explicit PromptWriter(char* out) : out_(out) {}
  // `s` `times` times; false when the size overflows.
  bool Put(std::string_view s, size_t times = 1) {
    size_t bytes = 0, end = 0;
    if (!CheckedMul(s.size(), times, &bytes) || !CheckedAdd(n_, bytes, &end))
      return false;
    if (out_ != nullptr && !s.empty()) {
      for (size_t i = 0; i < times; ++i)
        memcpy(out_ + n_ + i * s.size(), s.data(), s.size());
    }
    n_ = end;
    return true;
  }
  size_t size() const { return n_; }

 private:
  char* out_;
  size_t n_ = 0;
};

// The tiles an image's rows fill: its grid's, then the global view; or the one tile.
Result<size_t> TilesOf(const PromptImage& image) {
  if (image.grid_rows < 0 || image.grid_cols < 0 ||
      (image.grid_rows == 0) != (image.grid_cols == 0)) {
    return InvalidArgument("an image grid of %d x %d tiles", image.grid_rows,
                           image.grid_cols);
  }
  size_t tiles = 1;
  if (image.grid_rows > 0 && (!CheckedMul(static_cast<size_t>(image.grid_rows),
                                          static_cast<size_t>(image.grid_cols), &tiles) ||
                              !CheckedAdd(tiles, size_t{1}, &tiles))) {
    return OutOfRange("an image grid past the address space");
  }
  if (image.rows == 0 || image.rows % tiles != 0) {
    return InvalidArgument("%zu image rows do not fill %zu tiles evenly", image.rows,
                           tiles);
  }
  return tiles;
}

// One image's text in the prompt's layout.
Status PutImage(const ImagePrompt& p, const PromptImage& image, PromptWriter* w) {
  const Status overflow = OutOfRange("an image prompt past the address space");
  if (p.layout == ImagePromptLayout::kSingle) {
    return w->Put(p.before) && w->Put(p.token, image.rows) && w->Put(p.after)
               ? Status::Ok()
               : overflow;
  }
  Result<size_t> tiles = TilesOf(image);
  if (!tiles.ok()) return tiles.status();
  const size_t per_tile = image.rows / *tiles;
  bool ok = true;
  if (image.grid_rows > 0) {
    char name[48];
    for (int r = 1; r <= image.grid_rows; ++r) {
      for (int c = 1; c <= image.grid_cols; ++c) {
        const int n = snprintf(name, sizeof(name), "<row_%d_col_%d>", r, c);
        ok = ok && w->Put(p.around) && w->Put(std::string_view(name, n)) &&
             w->Put(p.token, per_tile);
      }
      ok = ok && w->Put("\n");
    }
    ok = ok && w->Put("\n");
  }
  ok = ok && w->Put(p.around) && w->Put(p.global_token) && w->Put(p.token, per_tile) &&
       w->Put(p.around);
  return ok ? Status::Ok() : overflow;
}

// The expanded text into `w` (counting, or writing).
Status Expand(const ImagePrompt& prompt, std::string_view text, const PromptImage* images,
              size_t count, UnmarkedImages unmarked, PromptWriter* w) {
  if (prompt.marker.empty()) {
    return InvalidArgument(
        "the model's file has no image prompt (its tokenizer had no image token when it "
        "was converted): it takes images only as rows given to Session::PrefillEmbedded");
  }
  const size_t markers = CountImageMarkers(prompt, text);
  // Without markers (with kFirst), the images come first.
  const bool first = markers == 0 && unmarked == UnmarkedImages::kFirst;
  if (markers != count && !first) {
    return InvalidArgument("%zu image%s for %zu '%s' marker%s in the prompt", count,
                           count == 1 ? "" : "s", markers, prompt.marker.c_str(),
                           markers == 1 ? "" : "s");
  }
  const std::string_view marker = prompt.marker;
  size_t from = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t at = first ? 0 : text.find(marker, from);
    if (!w->Put(text.substr(from, at - from))) {
      return OutOfRange("an image prompt past the address space");
    }
    EMBER_RETURN_IF_ERROR(PutImage(prompt, images[i], w));
    from = first ? 0 : at + marker.size();
  }
  if (!w->Put(text.substr(from))) {
    return OutOfRange("an image prompt past the address space");
  }
  return Status::Ok();
}

}  // namespace

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
                                        const PromptImage* images, size_t count,
                                        UnmarkedImages unmarked) {
  PromptWriter counter(nullptr);
  EMBER_RETURN_IF_ERROR(Expand(prompt, text, images, count, unmarked, &counter));
  return counter.size();
}

Status ExpandImagePrompt(const ImagePrompt& prompt, std::string_view text,
                         const PromptImage* images, size_t count, char* out,
                         size_t capacity, size_t* length, UnmarkedImages unmarked) {
  Result<size_t> bytes = ExpandedImagePromptBytes(prompt, text, images, count, unmarked);
  if (!bytes.ok()) return bytes.status();
  if (*bytes > capacity) {
    return OutOfRange("the expanded prompt takes %zu bytes; %zu given", *bytes, capacity);
  }
  PromptWriter writer(out);
  EMBER_RETURN_IF_ERROR(Expand(prompt, text, images, count, unmarked, &writer));
  *length = writer.size();
  return Status::Ok();
}

}  // namespace ember
