// ForwardProfile: wall time of the forward pass by kind of kernel, for `ember bench
// --profile`. The forward pass opens a ProfileScope around each step; with no profile
// attached (the default) a scope is one null check.
#ifndef EMBER_RUNTIME_PROFILE_H_
#define EMBER_RUNTIME_PROFILE_H_

#include <chrono>
#include <cstdint>

namespace ember {

enum class KernelKind : int {
  kMatMul = 0,  // matvec (decode) and matmul (prefill): every Linear
  kAttention,   // scores, softmax and the weighted sum of values
  kNorm,        // RMSNorm / LayerNorm
  kRope,        // rotary tables and rotations
  kActivation,  // SiLU/GELU/ReLU, and the gate product of a gated FFN
  kPass,        // a whole forward pass: the rest of it (embedding, residual adds,
                // biases) is kPass minus the kinds above
  kNumKinds,
};

struct ForwardProfile {
  uint64_t ns[static_cast<int>(KernelKind::kNumKinds)] = {};
  uint64_t passes = 0;
  // Regions that ran on more than one thread (ThreadPool::ParallelTiles): their wall
  // time, that time times the pool's thread count, and the part of the latter the
  // threads spent running tiles. The rest is waking the workers, waiting for the last
  // tile and handing back: what a thread count loses to the pool, not to the kernels.
  uint64_t region_ns = 0;
  uint64_t region_thread_ns = 0;
  uint64_t tile_ns = 0;  // added to by every thread (atomically)

  uint64_t& operator[](KernelKind kind) { return ns[static_cast<int>(kind)]; }
  void Reset() { *this = ForwardProfile(); }
};

// Adds the time from construction to destruction to profile[kind] (nothing when the
// profile is null). Only kPass scopes enclose others: nested kinds would count twice.
class ProfileScope {
 public:
  ProfileScope(ForwardProfile* profile, KernelKind kind) : profile_(profile), kind_(kind) {
    if (profile_) start_ = std::chrono::steady_clock::now();
  }
  ~ProfileScope() {
    if (profile_) {
      (*profile_)[kind_] += std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now() - start_)
                                .count();
    }
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  ForwardProfile* profile_;
  KernelKind kind_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_PROFILE_H_
