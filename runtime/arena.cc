// ArenaPlan: greedy-by-size offset assignment (see arena.h).
#include "runtime/arena.h"

#include <algorithm>

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
  }
  return "unknown";
}

size_t ArenaPlan::Add(const char* name, size_t bytes, int first_step, int last_step,
                      BufferKind kind) {
  const size_t padded = (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  buffers_.push_back({name, padded, first_step, last_step, kind, 0});
  return buffers_.size() - 1;
}

void ArenaPlan::Plan() {
  std::vector<size_t> order(buffers_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers_[a].bytes > buffers_[b].bytes;
  });
  std::vector<size_t> placed;
  total_bytes_ = 0;
  for (size_t id : order) {
    Buffer& buf = buffers_[id];
    // Candidate offsets: 0 and the end of every placed buffer live at the same time;
    // take the lowest where the buffer fits between them.
    std::vector<const Buffer*> live;
    for (size_t other : placed) {
      const Buffer& o = buffers_[other];
      if (o.first_step <= buf.last_step && buf.first_step <= o.last_step)
        live.push_back(&o);
    }
    std::sort(live.begin(), live.end(),
              [](const Buffer* a, const Buffer* b) { return a->offset < b->offset; });
    size_t offset = 0;
    for (const Buffer* o : live) {
      if (o->offset >= offset + buf.bytes) break;  // fits in the gap before o
      offset = std::max(offset, o->offset + o->bytes);
    }
    buf.offset = offset;
    placed.push_back(id);
    total_bytes_ = std::max(total_bytes_, offset + buf.bytes);
  }
}

}  // namespace ember
