// Micro-benchmarks of the matvec (decode) and matmul (prefill) kernels per weight type
// on the synthetic stories110M shapes, side by side with a streaming-read bandwidth probe
// over a buffer the size of the whole q8 model. Not run by ctest:
//   build/tools/bench/quant_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one command line)
// Decode counters: weight_GB/s (weight bytes / time; the weights of one call are cycled
// over copies filling >= 128 MiB so they come from DRAM, as in a real decode step; the
// q8/q4 and K-quant time includes quantizing the input). Prefill (batch 128): GMAC/s,
// multiply-adds per second (a whole 110M model at 109.5 M multiply-adds per token: t/s =
// GMAC/s * 9.1). Read: read_GB/s; decode efficiency = weight_GB/s / read_GB/s at the same
// thread count.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tools/bench/quant_bench.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
// Sum of n floats (n a multiple of 4 vectors, split in `streams` equal parts read side
// by side: several sequential streams, as a matvec over several panels or rows reads).
float SumFloats(const float* HWY_RESTRICT p, size_t n, size_t streams) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  if (streams == 4) {
    const size_t part = n / 4 / N * N;
    const float* p1 = p + part;
    const float* p2 = p1 + part;
    const float* p3 = p2 + part;
    for (size_t i = 0; i < part; i += N) {
      a0 = hn::Add(a0, hn::LoadU(d, p + i));
      a1 = hn::Add(a1, hn::LoadU(d, p1 + i));
      a2 = hn::Add(a2, hn::LoadU(d, p2 + i));
      a3 = hn::Add(a3, hn::LoadU(d, p3 + i));
    }
  } else {
    for (size_t i = 0; i + 4 * N <= n; i += 4 * N) {
      a0 = hn::Add(a0, hn::LoadU(d, p + i));
      a1 = hn::Add(a1, hn::LoadU(d, p + i + N));
      a2 = hn::Add(a2, hn::LoadU(d, p + i + 2 * N));
      a3 = hn::Add(a3, hn::LoadU(d, p + i + 3 * N));
    }
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
}
}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "hwy/aligned_allocator.h"
#include "hwy/targets.h"
#include "kernels/half.h"
#include "kernels/kernel_table.h"
#include "kernels/kquant_layout.h"
#include "kernels/quant_layout.h"
#include "kernels/quantize/kquant_quantize.h"
#include "kernels/quantize/quant_pack.h"

namespace ember::kernels {
HWY_EXPORT(SumFloats);
namespace {

enum class Format { kF32, kF16, kBF16, kQ8, kQ4, kQ4K, kQ5K, kQ6K };
const char* kFormatNames[] = {"f32", "f16", "bf16", "q8", "q4", "q4_k", "q5_k", "q6_k"};
constexpr int64_t kFormats = 8;

bool IsK(Format f) { return f >= Format::kQ4K; }
KQuantKind KindOf(Format f) {
  return f == Format::kQ4K   ? KQuantKind::kQ4K
         : f == Format::kQ5K ? KQuantKind::kQ5K
                             : KQuantKind::kQ6K;
}
constexpr size_t kColdBytes = size_t{128} << 20;  // > L3: decode weights from DRAM
constexpr size_t kPrefillBatch = 128;

// EMBER_BENCH_DISABLE=AVX3_DL,AVX3 (Highway target names) measures what a CPU without
// them would run, e.g. the portable int8 code on AVX2.
KernelTable MakeTable() {
  if (const char* names = getenv("EMBER_BENCH_DISABLE")) {
    int64_t disabled = 0;
    for (int64_t t = HWY_TARGETS; t != 0; t &= t - 1) {
      const int64_t target = t & -t;
      const std::string name = hwy::TargetName(target);
      const std::string list = std::string(",") + names + ",";
      if (list.find("," + name + ",") != std::string::npos) disabled |= target;
    }
    hwy::DisableTargets(disabled);
  }
  KernelTable table = ChooseKernels();
  fprintf(stderr, "[ember] kernels: Highway target %s, int8 dot product %s\n",
          table.target, table.int8_dot);
  return table;
}

const KernelTable& Table() {
  static const KernelTable table = MakeTable();
  return table;
}

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

size_t WeightBytes(Format f, size_t rows, size_t cols) {
  switch (f) {
    case Format::kF32:
      return rows * cols * 4;
    case Format::kF16:
    case Format::kBF16:
      return rows * cols * 2;
    case Format::kQ8:
      return QuantPackedBytes(QuantKind::kQ8, rows, cols);
    case Format::kQ4:
      return QuantPackedBytes(QuantKind::kQ4, rows, cols);
    case Format::kQ4K:
    case Format::kQ5K:
    case Format::kQ6K:
      return KQuantPackedBytes(KindOf(f), rows, cols);
  }
  return 0;
}

// `copies` copies of one (rows, cols) weight matrix in `format`, back to back.
hwy::AlignedFreeUniquePtr<uint8_t[]> MakeWeights(Format format, size_t rows, size_t cols,
                                                 size_t copies) {
  const size_t bytes = WeightBytes(format, rows, cols);
  auto out = hwy::AllocateAligned<uint8_t>(bytes * copies);
  const std::vector<float> w = RandomFloats(rows * cols, 7);
  uint8_t* first = out.get();
  if (format == Format::kF32) {
    memcpy(first, w.data(), bytes);
  } else if (format == Format::kF16 || format == Format::kBF16) {
    uint16_t* bits = reinterpret_cast<uint16_t*>(first);
    for (size_t i = 0; i < w.size(); ++i) {
      bits[i] = format == Format::kF16 ? FloatToHalf(w[i]) : FloatToBFloat16(w[i]);
    }
  } else if (IsK(format)) {
    PackKQuant(KindOf(format), w.data(), rows, cols, first);
  } else {
    PackQuant(format == Format::kQ8 ? QuantKind::kQ8 : QuantKind::kQ4, w.data(), rows,
              cols, first);
  }
  for (size_t c = 1; c < copies; ++c) memcpy(first + c * bytes, first, bytes);
  return out;
}

// y = W x (batch rows of x) with the table's kernel for `format`; quantized types
// quantize x first (into q, scales, sums, half sums), as the runtime does once per input.
void Run(Format format, const uint8_t* w, const float* x, size_t batch, float* y,
         size_t rows, size_t cols, int8_t* q, float* scales, int32_t* sums,
         int32_t* half_sums) {
  const KernelTable& t = Table();
  const uint16_t* w16 = reinterpret_cast<const uint16_t*>(w);
  switch (format) {
    case Format::kF32:
      if (batch == 1) {
        t.matvec_f32(reinterpret_cast<const float*>(w), x, y, rows, cols);
      } else {
        t.matmul_f32(reinterpret_cast<const float*>(w), x, batch, y, rows, rows, cols);
      }
      return;
    case Format::kF16:
      batch == 1 ? t.matvec_f16(w16, x, y, rows, cols)
                 : t.matmul_f16(w16, x, batch, y, rows, rows, cols);
      return;
    case Format::kBF16:
      batch == 1 ? t.matvec_bf16(w16, x, y, rows, cols)
                 : t.matmul_bf16(w16, x, batch, y, rows, rows, cols);
      return;
    case Format::kQ8:
    case Format::kQ4: {
      t.quantize_acts(x, batch, cols, q, scales, sums, nullptr);
      const bool q8 = format == Format::kQ8;
      const MatMulQuantFn fn = batch == 1 ? (q8 ? t.matvec_q8 : t.matvec_q4)
                                          : (q8 ? t.matmul_q8 : t.matmul_q4);
      fn(w, q, scales, sums, batch, y, rows, rows, cols);
      return;
    }
    case Format::kQ4K:
    case Format::kQ5K:
    case Format::kQ6K: {
      t.quantize_acts(x, batch, cols, q, scales, sums, half_sums);
      const bool one = batch == 1;
      const MatMulKQuantFn fn =
          format == Format::kQ4K   ? (one ? t.matvec_q4k : t.matmul_q4k)
          : format == Format::kQ5K ? (one ? t.matvec_q5k : t.matmul_q5k)
                                   : (one ? t.matvec_q6k : t.matmul_q6k);
      fn(w, q, scales, sums, half_sums, batch, y, rows, rows, cols);
      return;
    }
  }
}

// Args: format, rows, cols, batch. With several benchmark threads, each takes its share
// of the rows (multiples of 16, as the runtime splits them).
void BM_Linear(benchmark::State& state) {
  const Format format = static_cast<Format>(state.range(0));
  const size_t rows = state.range(1), cols = state.range(2), batch = state.range(3);
  const size_t bytes = WeightBytes(format, rows, cols);
  const size_t copies = batch == 1 ? (kColdBytes + bytes - 1) / bytes : 1;
  // Made by thread 0 before the loop (threads meet there), kept for the next run of
  // the same case (Google Benchmark calls this several times per case).
  static hwy::AlignedFreeUniquePtr<uint8_t[]> shared;
  static std::vector<size_t> shared_key;
  const std::vector<size_t> key = {static_cast<size_t>(format), rows, cols, copies};
  if (state.thread_index() == 0 && key != shared_key) {
    shared = MakeWeights(format, rows, cols, copies);
    shared_key = key;
  }
  const std::vector<float> x = RandomFloats(batch * cols, 3);
  const size_t groups = QuantGroups(cols);
  std::vector<int8_t> q(batch * groups * kQuantGroup);
  std::vector<float> scales(batch * groups), y(batch * rows);
  std::vector<int32_t> sums(batch * groups), half_sums(batch * groups);
  // This thread's rows: panels of 16 split evenly.
  const size_t panels = QuantPanels(rows), threads = state.threads();
  const size_t p0 = panels * state.thread_index() / threads;
  const size_t p1 = panels * (state.thread_index() + 1) / threads;
  const size_t r0 = p0 * 16, r1 = p1 * 16 < rows ? p1 * 16 : rows;
  const size_t offset =
      IsK(format) ? p0 * KQuantPanelBytes(KindOf(format), cols)
      : format == Format::kQ8 || format == Format::kQ4
          ? p0 * QuantPanelBytes(format == Format::kQ8 ? QuantKind::kQ8 : QuantKind::kQ4,
                                 cols)
          : r0 * cols * (format == Format::kF32 ? 4 : 2);
  size_t copy = 0;
  for (auto _ : state) {
    const uint8_t* w = shared.get() + copy * bytes + offset;
    Run(format, w, x.data(), batch, y.data(), r1 - r0, cols, q.data(), scales.data(),
        sums.data(), half_sums.data());
    benchmark::DoNotOptimize(y.data());
    if (++copy == copies) copy = 0;
  }
  const double share = static_cast<double>(r1 - r0) / rows;
  if (batch == 1) {
    state.counters["weight_GB/s"] = benchmark::Counter(
        share * bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  } else {
    state.counters["GMAC/s"] =
        benchmark::Counter(share * rows * cols * batch * 1e-9,
                           benchmark::Counter::kIsIterationInvariantRate);
  }
  state.SetLabel(std::string(kFormatNames[state.range(0)]) + " " + std::to_string(cols) +
                 "->" + std::to_string(rows) + (format >= Format::kQ8 ? " " : "") +
                 (format >= Format::kQ8 ? Table().int8_dot : ""));
}

// Plain streaming read of a buffer the size of the whole 110M q8 model (~120 MB), split
// between the benchmark threads; arg: 1 or 4 sequential streams per thread.
void BM_ReadBandwidth(benchmark::State& state) {
  constexpr size_t kFloats = size_t{120} * 1000 * 1000 / 4;
  static hwy::AlignedFreeUniquePtr<float[]> buffer;
  if (state.thread_index() == 0 && !buffer) {
    buffer = hwy::AllocateAligned<float>(kFloats);
    for (size_t i = 0; i < kFloats; ++i) buffer[i] = static_cast<float>(i & 255);
  }
  const size_t begin = kFloats * state.thread_index() / state.threads() / 1024 * 1024;
  const size_t end = kFloats * (state.thread_index() + 1) / state.threads() / 1024 * 1024;
  for (auto _ : state) {
    benchmark::DoNotOptimize(HWY_DYNAMIC_DISPATCH(SumFloats)(
        buffer.get() + begin, end - begin, state.range(0)));
  }
  state.counters["read_GB/s"] = benchmark::Counter(
      (end - begin) * 4e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// quantize_acts alone (its share of a q8/q4 call above). Args: cols, batch.
void BM_QuantizeActs(benchmark::State& state) {
  const size_t cols = state.range(0), batch = state.range(1);
  const std::vector<float> x = RandomFloats(batch * cols, 5);
  const size_t groups = QuantGroups(cols);
  std::vector<int8_t> q(batch * groups * kQuantGroup);
  std::vector<float> scales(batch * groups);
  std::vector<int32_t> sums(batch * groups);
  for (auto _ : state) {
    Table().quantize_acts(x.data(), batch, cols, q.data(), scales.data(), sums.data(),
                          nullptr);
    benchmark::DoNotOptimize(q.data());
  }
  state.counters["Gfloat/s"] = benchmark::Counter(
      cols * batch * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void Shapes(benchmark::internal::Benchmark* b, int64_t batch) {
  // (rows, cols) = (out, in): 768->768, 768->2048, 2048->768, 768->32000.
  const int64_t shapes[][2] = {{768, 768}, {2048, 768}, {768, 2048}, {32000, 768}};
  for (const auto& s : shapes) {
    for (int64_t f = 0; f < kFormats; ++f) b->Args({f, s[0], s[1], batch});
  }
}

// One thread: CPU time (the machine may be shared: rates per second of this thread's
// CPU); two threads: wall time.
BENCHMARK(BM_ReadBandwidth)
    ->ArgName("streams")
    ->Arg(1)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadBandwidth)
    ->ArgName("streams")
    ->Arg(1)
    ->Arg(4)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_QuantizeActs)
    ->ArgNames({"cols", "batch"})
    ->Args({768, 1})
    ->Args({2048, 1})
    ->Args({768, 128})
    ->Args({2048, 128})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Linear)
    ->Apply([](benchmark::internal::Benchmark* b) { Shapes(b, 1); })
    ->ArgNames({"fmt", "rows", "cols", "batch"})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Linear)
    ->Apply([](benchmark::internal::Benchmark* b) { Shapes(b, 1); })
    ->ArgNames({"fmt", "rows", "cols", "batch"})
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Linear)
    ->Apply([](benchmark::internal::Benchmark* b) { Shapes(b, kPrefillBatch); })
    ->ArgNames({"fmt", "rows", "cols", "batch"})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ember::kernels

BENCHMARK_MAIN();
#endif  // HWY_ONCE
