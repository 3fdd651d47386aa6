// Google Benchmark: XNNPACK's f32 fully-connected operator (created in an arena region)
// against ember's Highway MatVecF32/MatMulF32 (through ChooseKernels), side by side in
// one run, on the linear layers of the synthetic stories110M model at batch 1 (decode)
// and 128 (prefill), on 1 and 2 threads. Counters: GFLOP/s (2 rows cols batch per call)
// and, for XNNPACK, its region bytes (operator + packed weights) per byte of weights.
// (XNNPACK's f16 operator computes in f16, too inaccurate for ember: not measured.)
//
//   build/tools/bench/xnn_bench --benchmark_repetitions=7
//       --benchmark_enable_random_interleaving=true --benchmark_min_time=0.2
//       --benchmark_out=xnn.json --benchmark_out_format=json     (one command line)
//   /usr/bin/python3 tools/bench/xnn_bench_summary.py xnn.json   (medians and ratios)
#include <pthreadpool.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/kernel_table.h"
#include "kernels/xnnpack/xnn_arena.h"
#include "kernels/xnnpack/xnn_fc.h"

namespace ember::kernels {
namespace {

// stories110M: d_model 768, ffn 2048, vocabulary 32000. (cols -> rows) per layer kind.
struct Shape {
  const char* name;
  size_t cols;
  size_t rows;
};
constexpr Shape kShapes[] = {
    {"qkvo_768x768", 768, 768},
    {"ffn_up_768x2048", 768, 2048},
    {"ffn_down_2048x768", 2048, 768},
    {"classifier_768x32000", 768, 32000},
};
constexpr size_t kBatches[] = {1, 128};
constexpr int kThreadCounts[] = {1, 2};

// Two threads: the calling one plus one worker (pthreadpool counts the caller).
pthreadpool_t Pool(int threads) {
  static pthreadpool_t two = pthreadpool_create(2);
  return threads == 1 ? nullptr : two;
}

// Everything one shape needs, built once: the weights, the XNNPACK operator and its
// region (operator + packed weights, 64-byte aligned as the arena planner places it).
struct Layer {
  size_t rows = 0, cols = 0;
  std::vector<float> w;
  std::vector<unsigned char> region;
  XnnFullyConnected xnn_f32;
  size_t region_bytes = 0;
};

const Layer& GetLayer(const Shape& shape) {
  static std::map<std::pair<size_t, size_t>, std::unique_ptr<Layer>> layers;
  std::unique_ptr<Layer>& slot = layers[{shape.rows, shape.cols}];
  if (slot) return *slot;
  slot.reset(new Layer);
  Layer& layer = *slot;
  layer.rows = shape.rows;
  layer.cols = shape.cols;
  std::mt19937 rng(static_cast<uint32_t>(shape.rows * 31 + shape.cols));
  std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
  layer.w.resize(shape.rows * shape.cols);
  for (float& v : layer.w) v = dist(rng);
  layer.region_bytes = XnnFullyConnectedArenaBytes(shape.rows, shape.cols);
  layer.region.resize(layer.region_bytes + kXnnRegionAlignment);
  const uintptr_t base = reinterpret_cast<uintptr_t>(layer.region.data());
  XnnArenaScope scope(
      layer.region.data() +
          (kXnnRegionAlignment - base % kXnnRegionAlignment) % kXnnRegionAlignment,
      layer.region_bytes);
  const XnnStatus status =
      layer.xnn_f32.CreateF32(layer.w.data(), shape.rows, shape.cols);
  if (status != XnnStatus::kOk) {
    fprintf(stderr, "xnn f32 create: %s\n", XnnStatusName(status));
  }
  return layer;
}

// Inputs (with XNN_EXTRA_BYTES of slack) and outputs for one call.
std::vector<float> Activations(size_t n) {
  std::mt19937 rng(static_cast<uint32_t>(n));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n + XnnExtraBytes() / sizeof(float) + 1);
  for (size_t i = 0; i < n; ++i) v[i] = dist(rng);
  return v;
}

void SetCounters(benchmark::State& state, const Layer& layer, size_t batch,
                 size_t packed_bytes, size_t weight_bytes) {
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * layer.rows * layer.cols * batch * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
  if (packed_bytes) {
    state.counters["packed_per_weight_byte"] =
        static_cast<double>(packed_bytes) / static_cast<double>(weight_bytes);
  }
}

// ember's Highway kernels with the row split of runtime/linear.cc and ThreadPool
// (kernels/ may not include runtime/, so the rule is repeated here): tiles of about 64K
// multiply-adds, a multiple of 8 rows, over pthreadpool; on one thread the same tiles run
// in order on the caller (ThreadPool::ParallelTiles without workers), which also keeps a
// tile's weights in cache while the batch streams past them.
struct EmberTask {
  const KernelTable* table;
  const float* w;
  const float* x;
  size_t batch, rows, cols;
  float* y;
};

void EmberRows(void* context, size_t begin, size_t count) {
  const EmberTask& t = *static_cast<const EmberTask*>(context);
  const float* w = t.w + begin * t.cols;
  if (t.batch == 1) {
    t.table->matvec_f32(w, t.x, t.y + begin, count, t.cols);
  } else {
    t.table->matmul_f32(w, t.x, t.batch, t.y + begin, t.rows, count, t.cols);
  }
}

size_t EmberRowTile(size_t cols, size_t batch) {
  size_t tile = (size_t{1} << 16) / (cols * batch);
  tile = (tile + 7) & ~size_t{7};
  return tile < 8 ? 8 : tile;
}

void BM_EmberHighwayF32(benchmark::State& state, Shape shape, size_t batch, int threads) {
  static const KernelTable table = ChooseKernels();
  const Layer& layer = GetLayer(shape);
  std::vector<float> x = Activations(batch * layer.cols);
  std::vector<float> y(batch * layer.rows);
  EmberTask task{&table,     layer.w.data(), x.data(), batch,
                 layer.rows, layer.cols,     y.data()};
  const size_t tile = EmberRowTile(layer.cols, batch);
  pthreadpool_t pool = Pool(threads);
  for (auto _ : state) {
    if (pool && layer.rows > tile) {
      pthreadpool_parallelize_1d_tile_1d(pool, &EmberRows, &task, layer.rows, tile, 0);
    } else {
      for (size_t begin = 0; begin < layer.rows; begin += tile) {
        EmberRows(&task, begin, layer.rows - begin < tile ? layer.rows - begin : tile);
      }
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  SetCounters(state, layer, batch, 0, 0);
  state.SetLabel(table.target);
}

void BM_XnnF32(benchmark::State& state, Shape shape, size_t batch, int threads) {
  Layer& layer = const_cast<Layer&>(GetLayer(shape));
  if (!layer.xnn_f32.created()) {
    state.SkipWithError("XNNPACK f32 fully-connected could not be created");
    return;
  }
  std::vector<float> x = Activations(batch * layer.cols);
  std::vector<float> y(batch * layer.rows);
  pthreadpool_t pool = Pool(threads);
  for (auto _ : state) {
    const XnnStatus status = layer.xnn_f32.Run(x.data(), batch, y.data(), pool);
    if (status != XnnStatus::kOk) {
      state.SkipWithError(XnnStatusName(status));
      break;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  SetCounters(state, layer, batch, layer.region_bytes, layer.w.size() * sizeof(float));
}

std::string LoadAverage() {
  char text[128] = "unknown";
  if (FILE* f = fopen("/proc/loadavg", "r")) {
    if (!fgets(text, sizeof(text), f)) snprintf(text, sizeof(text), "unknown");
    fclose(f);
  }
  std::string s(text);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace
}  // namespace ember::kernels

int main(int argc, char** argv) {
  using namespace ember::kernels;  // NOLINT: a benchmark's main
  const XnnStatus status = XnnInitializeForArenas();
  if (status != XnnStatus::kOk) {
    fprintf(stderr, "xnn_initialize: %s\n", XnnStatusName(status));
    return 1;
  }
  // Registered shape by shape so each implementation sits beside the others.
  for (const Shape& shape : kShapes) {
    for (size_t batch : kBatches) {
      for (int threads : kThreadCounts) {
        const std::string suffix = std::string(shape.name) +
                                   "/batch:" + std::to_string(batch) +
                                   "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(("ember_hwy_f32/" + suffix).c_str(),
                                     BM_EmberHighwayF32, shape, batch, threads)
            ->UseRealTime()
            ->MeasureProcessCPUTime();
        benchmark::RegisterBenchmark(("xnn_f32/" + suffix).c_str(), BM_XnnF32, shape,
                                     batch, threads)
            ->UseRealTime()
            ->MeasureProcessCPUTime();
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("loadavg_at_start", LoadAverage());
  benchmark::AddCustomContext("xnn_f16", "not measured");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fprintf(stderr, "load average at end: %s\n", LoadAverage().c_str());
  return 0;
}
