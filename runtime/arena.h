// ArenaPlan: assigns every session buffer an offset in one arena from its lifetime,
// greedy by size (as TensorFlow Lite Micro's planner does), so buffers that are never
// live at the same time share bytes. The total is known before anything is allocated,
// and planning itself allocates nothing (fixed-capacity tables, no containers).
#ifndef EMBER_RUNTIME_ARENA_H_
#define EMBER_RUNTIME_ARENA_H_

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"

namespace ember {

// Every buffer starts on, and is padded to, this many bytes: a cache line, and at least
// the widest vector any kernel loads on x86 and NEON (SVE loads are unaligned-safe), and
// more than the 16 bytes XNNPACK may read past an input.
inline constexpr size_t kArenaAlignment = 64;

// What a buffer holds, for the totals `ember inspect` prints.
enum class BufferKind { kKvCache, kActivations, kScratch, kXnnpack, kGrammar };
const char* BufferKindName(BufferKind kind);

// A buffer of a plan, typed by its elements: Add returns it, Bind turns it into a T*.
template <class T>
struct ArenaBuffer {
  static constexpr uint16_t kNone = 0xFFFF;
  uint16_t index = kNone;
};

class ArenaPlan {
 public:
  // More buffers than a session plans; Add past it makes Plan fail.
  static constexpr size_t kMaxBuffers = 40;

  struct Buffer {
    const char* name = "";
    size_t bytes = 0;    // padded size
    int first_step = 0;  // lifetime: live during steps [first_step, last_step]
    int last_step = 0;
    BufferKind kind = BufferKind::kActivations;
    size_t offset = 0;
  };

  // Adds a buffer of `count` elements of T, live during steps [first_step, last_step].
  template <class T>
  ArenaBuffer<T> Add(const char* name, size_t count, int first_step, int last_step,
                     BufferKind kind = BufferKind::kActivations) {
    const size_t bytes =
        count > kMaxBytes / sizeof(T) ? kMaxBytes + 1 : count * sizeof(T);
    ArenaBuffer<T> id;
    id.index = AddBytes(name, bytes, first_step, last_step, kind);
    return id;
  }

  // Assigns offsets: largest first, each at the lowest offset that overlaps no placed
  // buffer whose lifetime intersects its own. Fails when a buffer was too large to
  // address or there were more than kMaxBuffers.
  Status Plan();

  // The buffer's memory in an arena laid out by this plan (`base` aligned to
  // kArenaAlignment); null for an empty buffer.
  template <class T>
  T* Bind(ArenaBuffer<T> id, uint8_t* base) const {
    const size_t i = id.index;
    if (i >= kMaxBuffers || i >= num_buffers_ || buffers_[i].bytes == 0) return nullptr;
    return static_cast<T*>(static_cast<void*>(base + buffers_[i].offset));
  }

  size_t total_bytes() const { return total_bytes_; }
  size_t num_buffers() const { return num_buffers_; }
  const Buffer& buffer(size_t index) const { return buffers_[index]; }

 private:
  // Larger sizes are refused (so padding cannot overflow); Plan checks every sum too.
  static constexpr size_t kMaxBytes = SIZE_MAX / 2;
  uint16_t AddBytes(const char* name, size_t bytes, int first_step, int last_step,
                    BufferKind kind);

  Buffer buffers_[kMaxBuffers];
  size_t num_buffers_ = 0;
  size_t total_bytes_ = 0;
  const char* too_large_ = nullptr;  // the first buffer past kMaxBytes
  bool too_many_ = false;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_ARENA_H_
