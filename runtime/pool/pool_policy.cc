// PoolPolicy (pool_policy.h): the window state machine.
#include "runtime/pool/pool_policy.h"

namespace ember {

PoolPolicy::State PoolPolicy::StateAt(uint64_t now_ns) const {
  if (now_ns < window_end_ns_) return State::kFewerThreads;
  if (window_end_ns_ != 0 && now_ns - window_end_ns_ < config_.again_ns) {
    return State::kRetrying;
  }
  return State::kAllThreads;
}

// The two signs of a stall (pool_policy.h); takes the run-queue sample if there is one.
bool PoolPolicy::Stalled(const RegionSeen& r) {
  bool shares = false;
  co_ran_ = co_ran_ || r.worker_on_caller_cpu;
  if (r.has_run_queue) {
    shares = co_ran_ && sample_ns_ != 0 && r.caller_id == sample_caller_ &&
             r.end_ns > sample_ns_ &&
             r.run_queue_ns - sample_run_queue_ns_ >
                 (r.end_ns - sample_ns_) / config_.shared_part;
    sample_ns_ = r.end_ns;
    sample_run_queue_ns_ = r.run_queue_ns;
    sample_caller_ = r.caller_id;
    co_ran_ = false;
  }
  const uint64_t per_unit = r.caller_work_ns / (r.caller_units ? r.caller_units : 1);
  const bool waited = r.caller_wait_ns > config_.stall_wait_ns &&
                      r.caller_wait_ns > config_.stall_units * per_unit;
  return shares || waited;
}

void PoolPolicy::Observe(const RegionSeen& r) {
  if (!Stalled(r)) return;
  const bool in_row =
      last_stall_ns_ != 0 && r.start_ns - last_stall_ns_ < config_.stall_gap_ns;
  if (!in_row) stalls_ = 0, row_start_ns_ = r.start_ns;
  ++stalls_;
  last_stall_ns_ = r.end_ns;
  if (stalls_ < config_.stalls_to_act || r.end_ns - row_start_ns_ < config_.persist_ns) {
    return;
  }
  // A window's threads stall too: one fewer, as long again. A window soon after the
  // last one: its count, twice as long. Else one thread fewer than all.
  const bool in_window = r.threads < num_threads_;
  const bool again =
      !in_window && window_end_ns_ != 0 && r.start_ns - window_end_ns_ < config_.again_ns;
  int next = in_window ? r.threads - 1 : again ? window_threads_ : num_threads_ - 1;
  if (next < 1) next = 1;
  if (!in_window) {
    next_window_ns_ =
        again ? (2 * next_window_ns_ < config_.max_window_ns ? 2 * next_window_ns_
                                                             : config_.max_window_ns)
              : config_.window_ns;
  }
  window_threads_ = next;
  window_end_ns_ = r.end_ns + next_window_ns_;
  last_stall_ns_ = 0;
}

}  // namespace ember
