// Chat's images: attached to the next user turn, expanded into the conversation's text,
// kept in the cache across turns while they stay where they were, and prefilled with
// their rows (see chat.h; the turns are chat.cc).
#include <cstdint>
#include <cstring>

#include "runtime/chat/chat.h"

namespace ember {

Status Chat::AttachImage(const float* rows, const PromptImage& image) {
  const VisionConfig* vision = session_->model().vision();
  if (vision == nullptr || vision->prompt.marker.empty()) {
    return InvalidArgument("the model has no vision tower with an image prompt");
  }
  if (options_.max_images == 0 || num_images_ + pending_images_ >= options_.max_images) {
    return ResourceExhausted(
        "the chat holds %u image%s (ChatOptions::max_images): reset it, or let its old "
        "turns go",
        options_.max_images, options_.max_images == 1 ? "" : "s");
  }
  if (rows == nullptr || image.rows == 0) {
    return InvalidArgument("an image without rows");
  }
  const size_t j = num_images_ + pending_images_;
  images_[j] = image;
  image_refs_[j] = ImageRef{rows, next_image_id_};
  next_image_id_ = next_image_id_ == UINT32_MAX ? 1 : next_image_id_ + 1;
  ++pending_images_;
  return Status::Ok();
}

void Chat::DropImages(size_t i) {
  const size_t gone = message_images_[i];
  if (gone == 0) return;
  const size_t left = num_images_ + pending_images_ - gone;
  memmove(images_, images_ + gone, left * sizeof(PromptImage));
  memmove(image_refs_, image_refs_ + gone, left * sizeof(ImageRef));
  num_images_ -= gone;
}

Status Chat::TokenizeImages(const char* text, size_t length, size_t first_image,
                            size_t images, const EncodeOptions& encode,
                            const int32_t** tokens, size_t* n) {
  Session& s = *session_;
  const VisionConfig& v = *s.model().vision();
  size_t expanded = 0;
  // Refused (InvalidArgument) when the markers are not the images': a marker typed in a
  // turn without an image, or one the model wrote in a reply.
  const Status written =
      ExpandImagePrompt(v.prompt, std::string_view(text, length), images_ + first_image,
                        images, expanded_, expanded_capacity_, &expanded);
  if (!written.ok()) {
    if (written.code() != StatusCode::kOutOfRange &&
        written.code() != StatusCode::kResourceExhausted) {
      return written;
    }
    return ResourceExhausted(
        "the conversation with its images expanded exceeds the session's "
        "max_prompt_bytes %zu",
        s.plan().max_prompt_bytes);
  }
  EMBER_RETURN_IF_ERROR(s.Tokenize(expanded_, expanded, encode, tokens, n));
  // Each image token is the next row: image j's are the next images_[j].rows of them.
  size_t j = 0, seen = 0;
  for (size_t i = 0; i < *n; ++i) {
    if ((*tokens)[i] != v.image_token_id) continue;
    if (j == images) {
      seen = 1;  // more image tokens than rows
      break;
    }
    if (seen == 0) spans_[j].first = i;
    if (++seen == images_[first_image + j].rows) {
      spans_[j].last = i;
      ++j;
      seen = 0;
    }
  }
  if (j != images || seen != 0) {
    return InvalidArgument(
        "the conversation's image tokens (id %d) are not its images' rows: the tokenizer "
        "does not read '%s' as the image token, or a turn names it itself",
        v.image_token_id, v.prompt.token.c_str());
  }
  return Status::Ok();
}

size_t Chat::KeepCachedImages(size_t keep) {
  if (cached_shifts_ != session_->shifts()) num_cached_ = 0;  // positions moved
  for (size_t j = 0; j < num_images_; ++j) {
    const ImageSpan span = spans_[j];
    if (span.first >= keep) break;
    bool held = false;
    for (size_t c = 0; c < num_cached_ && !held; ++c) {
      held = cached_[c].first == span.first && cached_[c].id == image_refs_[j].id;
    }
    // Another image at these positions (the same tokens), or part of this one (a
    // bidirectional block must be whole in one step): prefill from its start.
    if (!held || span.last >= keep) return span.first;
  }
  return keep;
}

Status Chat::PrefillImages(const int32_t* tokens, size_t* at, ChatTurnStats* stats) {
  Session& s = *session_;
  const VisionConfig& v = *s.model().vision();
  // The cache keeps the images before the cached prefix (KeepCachedImages found each
  // whole, at its place); what lies past it is about to be written over.
  num_cached_ = 0;
  for (size_t j = 0; j < num_images_; ++j) {
    const ImageSpan span = spans_[j];
    if (span.first < *at) {
      cached_[num_cached_++] = CachedImage{span.first, image_refs_[j].id};
      continue;
    }
    EmbeddedRows rows;
    rows.marker = v.image_token_id;
    rows.rows = image_refs_[j].rows;
    rows.count = images_[j].rows;
    rows.bidirectional = v.image_blocks_bidirectional;
    EMBER_RETURN_IF_ERROR(s.PrefillEmbedded(tokens + *at, span.last + 1 - *at, rows));
    *at = span.last + 1;
    cached_[num_cached_++] = CachedImage{span.first, image_refs_[j].id};
    ++stats->prefilled_images;
  }
  cached_shifts_ = s.shifts();
  return Status::Ok();
}

}  // namespace ember
