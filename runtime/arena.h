// ArenaPlan: assigns every session buffer an offset in one arena from its lifetime,
// greedy by size (as TensorFlow Lite Micro's planner does), so buffers that are never
// live at the same time share bytes. The total is known before anything is allocated.
#ifndef EMBER_RUNTIME_ARENA_H_
#define EMBER_RUNTIME_ARENA_H_

#include <cstddef>
#include <vector>

namespace ember {

// Every buffer starts on, and is padded to, this many bytes: a cache line, and at least
// the widest vector any kernel loads on x86 and NEON (SVE loads are unaligned-safe).
inline constexpr size_t kArenaAlignment = 64;

// What a buffer holds, for the totals `ember inspect` prints.
enum class BufferKind { kKvCache, kActivations, kScratch, kXnnpack };
const char* BufferKindName(BufferKind kind);

class ArenaPlan {
 public:
  struct Buffer {
    const char* name;
    size_t bytes;    // padded size
    int first_step;  // lifetime: live during steps [first_step, last_step]
    int last_step;
    BufferKind kind;
    size_t offset = 0;
  };

  // Adds a buffer of `bytes` live during steps [first_step, last_step]; returns its id.
  size_t Add(const char* name, size_t bytes, int first_step, int last_step,
             BufferKind kind = BufferKind::kActivations);
  // Assigns offsets: largest first, each at the lowest offset that overlaps no placed
  // buffer whose lifetime intersects its own.
  void Plan();

  size_t total_bytes() const { return total_bytes_; }
  size_t num_buffers() const { return buffers_.size(); }
  const Buffer& buffer(size_t id) const { return buffers_[id]; }

 private:
  std::vector<Buffer> buffers_;
  size_t total_bytes_ = 0;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_ARENA_H_
