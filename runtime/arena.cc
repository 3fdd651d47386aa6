// ArenaPlan: greedy-by-size offset assignment (see arena.h), on fixed-size tables.
#include "runtime/arena.h"

namespace ember {

const char* BufferKindName(BufferKind kind) {
  switch (kind) {
    case BufferKind::kKvCache:
      return "kv cache";
    case BufferKind::kActivations:
      return "activations";
    case BufferKind::kScratch:
      return "scratch";
    case BufferKind::kXnnpack:
      return "xnnpack";
    case BufferKind::kGrammar:
      return "grammar";
  }
  return "unknown";
}

uint16_t ArenaPlan::AddBytes(const char* name, size_t bytes, int first_step,
                             int last_step, BufferKind kind) {
  if (num_buffers_ == kMaxBuffers) {
    too_many_ = true;
    return ArenaBuffer<uint8_t>::kNone;
  }
  if (bytes > kMaxBytes) {
    if (too_large_ == nullptr) too_large_ = name;
    bytes = 0;
  }
  Buffer& b = buffers_[num_buffers_];
  b.name = name;
  b.bytes = (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  b.first_step = first_step;
  b.last_step = last_step;
  b.kind = kind;
  b.offset = 0;
  return static_cast<uint16_t>(num_buffers_++);
}

Status ArenaPlan::Plan() {
  total_bytes_ = 0;
  if (too_many_) {
    return Internal("arena plan: more than %zu buffers", kMaxBuffers);
  }
  if (too_large_ != nullptr) {
    return ResourceExhausted("arena buffer %s is too large to address", too_large_);
  }
  // Largest first; ties keep the order of Add (an insertion sort is stable and needs no
  // memory beyond this table).
  uint16_t order[kMaxBuffers];
  for (size_t i = 0; i < num_buffers_; ++i) {
    size_t j = i;
    while (j > 0 && buffers_[order[j - 1]].bytes < buffers_[i].bytes) {
      order[j] = order[j - 1];
      --j;
    }
    order[j] = static_cast<uint16_t>(i);
  }
  for (size_t placed = 0; placed < num_buffers_; ++placed) {
    Buffer& buf = buffers_[order[placed]];
    // The placed buffers live at the same time, by offset: the candidates are 0 and the
    // end of each; take the lowest where the buffer fits before the next one.
    const Buffer* live[kMaxBuffers];
    size_t num_live = 0;
    for (size_t p = 0; p < placed; ++p) {
      const Buffer& o = buffers_[order[p]];
      if (o.first_step > buf.last_step || buf.first_step > o.last_step) continue;
      size_t j = num_live++;
      while (j > 0 && live[j - 1]->offset > o.offset) {
        live[j] = live[j - 1];
        --j;
      }
      live[j] = &o;
    }
    size_t offset = 0;
    for (size_t i = 0; i < num_live; ++i) {
      const Buffer* o = live[i];
      if (o->offset >= offset && o->offset - offset >= buf.bytes) break;  // gap before o
      const size_t end = o->offset + o->bytes;  // placed ends never overflow (below)
      if (end > offset) offset = end;
    }
    if (buf.bytes > SIZE_MAX - offset) {
      return ResourceExhausted("the arena plan is too large to address (at buffer %s)",
                               buf.name);
    }
    buf.offset = offset;
    if (offset + buf.bytes > total_bytes_) total_bytes_ = offset + buf.bytes;
  }
  return Status::Ok();
}

}  // namespace ember
