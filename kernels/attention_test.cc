// Tests multi-head attention over a strided KV cache of f32, f16 or q8 rows (KvRows) on
// every compiled target: spans of positions and their merge against the scalar twins, the
// same rows in a ring, and the q8 encoding of rows.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention_test.cc"
#include <algorithm>
#include <vector>

#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/attention-inl.h"
#include "kernels/half.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

// One token's query and a cache of n_pos positions in one type (rows one element longer
// than the heads, starting one element past an aligned address: nothing is aligned),
// built from random floats; Attend runs this target's kernel, Reference the scalar twin.
struct Cache {
  KvType type;
  size_t n_heads, n_kv, head_dim, group, n_pos, kv_stride, scale_stride;
  std::vector<float> q, keys, values;  // f32 (the f32 cache's rows)
  std::vector<uint16_t> keys16, values16;
  std::vector<int8_t> q8, keys8, values8;
  std::vector<float> q_scales, key_scales, value_scales;

  Cache(KvType t, size_t heads, size_t kv_heads, size_t dim, size_t positions,
        uint32_t seed)
      : type(t),
        n_heads(heads),
        n_kv(kv_heads),
        head_dim(dim),
        group(heads / kv_heads),
        n_pos(positions),
        kv_stride(kv_heads * dim + 1),
        scale_stride(kv_heads * KvGroups(dim) + 1) {
    q = test::Buffer(n_heads * head_dim, 0, seed).Copy();
    keys = test::Buffer(n_pos * kv_stride + 1, 0, seed + 1, 2.0f).Copy();
    values = test::Buffer(n_pos * kv_stride + 1, 0, seed + 2).Copy();
    if (type == KvType::kF16) {
      for (float x : keys) keys16.push_back(FloatToHalf(x));
      for (float x : values) values16.push_back(FloatToHalf(x));
    }
    if (type == KvType::kQ8) {
      const size_t groups = KvGroups(head_dim), padded = groups * kKvGroup;
      q8.assign(n_heads * padded + 1, 0);
      q_scales.assign(n_heads * groups + 1, 0.0f);
      QuantizeKv(q.data(), n_heads, head_dim, padded, q8.data() + 1, q_scales.data() + 1);
      keys8.assign(keys.size(), 0);
      values8.assign(values.size(), 0);
      key_scales.assign(n_pos * scale_stride + 1, 0.0f);
      value_scales.assign(n_pos * scale_stride + 1, 0.0f);
      for (size_t t = 0; t < n_pos; ++t) {
        QuantizeKv(keys.data() + 1 + t * kv_stride, n_kv, head_dim, head_dim,
                   keys8.data() + 1 + t * kv_stride,
                   key_scales.data() + 1 + t * scale_stride);
        QuantizeKv(values.data() + 1 + t * kv_stride, n_kv, head_dim, head_dim,
                   values8.data() + 1 + t * kv_stride,
                   value_scales.data() + 1 + t * scale_stride);
      }
    }
  }

  // The rows k and v (and q8's scales ks and vs) as the kernel reads them, from their
  // second element; in a ring of `ring` rows ending at the last one when ring > 0.
  template <class T>
  KvRows Rows(const std::vector<T>& k, const std::vector<T>& v,
              const std::vector<float>& ks, const std::vector<float>& vs,
              size_t ring = 0) const {
    KvRows rows;
    rows.type = type;
    rows.keys = k.data() + 1;
    rows.values = v.data() + 1;
    rows.key_scales = ks.empty() ? nullptr : ks.data() + 1;
    rows.value_scales = vs.empty() ? nullptr : vs.data() + 1;
    rows.kv_stride = kv_stride;
    rows.scale_stride = scale_stride;
    if (ring > 0) {
      rows.ring_end = ring;
      rows.ring_rows = ring;
    }
    return rows;
  }
  AttendQuery Query() const {
    if (type == KvType::kQ8) {
      return AttendQuery{nullptr, q8.data() + 1, q_scales.data() + 1};
    }
    return AttendQuery{q.data(), nullptr, nullptr};
  }

  void Attend(const AttendSpansArgs& a, float* probs, float* partial) const {
    if (type == KvType::kF32) {
      AttendSpans(Rows(keys, values, {}, {}), Query(), a, probs, partial);
    } else if (type == KvType::kF16) {
      AttendSpans(Rows(keys16, values16, {}, {}), Query(), a, probs, partial);
    } else {
      AttendSpans(Rows(keys8, values8, key_scales, value_scales), Query(), a, probs,
                  partial);
    }
  }

  // Attend over the same rows laid out in a ring of `rows` rows (a sliding layer's
  // cache), position t at row (first + t) % rows: the kernel wraps at the ring's end.
  void AttendRing(AttendSpansArgs a, size_t first, size_t rows, float* probs,
                  float* partial) const {
    a.first_row = first;
    if (type == KvType::kF32) {
      AttendSpans(Rows(Ring(keys, kv_stride, first, rows),
                       Ring(values, kv_stride, first, rows), {}, {}, rows),
                  Query(), a, probs, partial);
    } else if (type == KvType::kF16) {
      AttendSpans(Rows(Ring(keys16, kv_stride, first, rows),
                       Ring(values16, kv_stride, first, rows), {}, {}, rows),
                  Query(), a, probs, partial);
    } else {
      AttendSpans(
          Rows(Ring(keys8, kv_stride, first, rows), Ring(values8, kv_stride, first, rows),
               Ring(key_scales, scale_stride, first, rows),
               Ring(value_scales, scale_stride, first, rows), rows),
          Query(), a, probs, partial);
    }
  }

  // The n_pos rows (of `stride` elements after one leading element) of v placed in a
  // ring of `rows` rows, position t at row (first + t) % rows.
  template <class T>
  std::vector<T> Ring(const std::vector<T>& v, size_t stride, size_t first,
                      size_t rows) const {
    std::vector<T> ring(1 + rows * stride, T());
    for (size_t t = 0; t < n_pos; ++t) {
      const size_t r = (first + t) % rows;
      std::copy(v.begin() + 1 + t * stride, v.begin() + 1 + (t + 1) * stride,
                ring.begin() + 1 + r * stride);
    }
    return ring;
  }

  void Reference(size_t h, float scale, float softcap, float* probs, float* out) const {
    const size_t kv = h / group, col = 1 + kv * head_dim;
    if (type == KvType::kF32) {
      reference::Attend(q.data() + h * head_dim, keys.data() + col, values.data() + col,
                        kv_stride, n_pos, head_dim, scale, softcap, probs, out);
    } else if (type == KvType::kF16) {
      reference::AttendF16(q.data() + h * head_dim, keys16.data() + col,
                           values16.data() + col, kv_stride, n_pos, head_dim, scale,
                           softcap, probs, out);
    } else {
      const size_t groups = KvGroups(head_dim), scales = 1 + kv * groups;
      reference::AttendQ8(q8.data() + 1 + h * groups * kKvGroup,
                          q_scales.data() + 1 + h * groups, keys8.data() + col,
                          key_scales.data() + scales, values8.data() + col,
                          value_scales.data() + scales, kv_stride, scale_stride, n_pos,
                          head_dim, scale, softcap, probs, out);
    }
  }
};

// Spans + merge against the scalar twin (one softmax over all positions) for the
// runtime's span and for other splits (one span, spans of 1 to 3 positions, spans that
// leave a short last one): computed in one range or span by span, bitwise the same.
void CheckAttendSpans(const Cache& cache, size_t span, uint32_t* seed) {
  const size_t n_heads = cache.n_heads, head_dim = cache.head_dim, n_pos = cache.n_pos;
  const size_t n_spans = (n_pos + span - 1) / span;
  const size_t probs_stride = n_pos + 3;
  const size_t partial_floats = AttentionPartialFloats(head_dim) * n_heads;
  AttendSpansArgs a;
  a.n_pos = n_pos;
  a.span = span;
  a.head_dim = head_dim;
  a.n_heads = n_heads;
  a.group = cache.group;
  a.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  // Soft-capped scores (Gemma 2) for half the shapes: the cap bends them.
  a.softcap = (n_pos + head_dim) % 2 == 0 ? 1.5f : 0.0f;
  a.probs_stride = probs_stride;
  std::vector<float> expected_probs(n_heads * n_pos), expected(n_heads * head_dim);
  for (size_t h = 0; h < n_heads; ++h) {
    cache.Reference(h, a.scale, a.softcap, expected_probs.data() + h * n_pos,
                    expected.data() + h * head_dim);
  }
  test::Buffer probs(n_heads * probs_stride, 1, (*seed)++);
  test::Buffer partial(n_spans * partial_floats, 1, (*seed)++);
  test::Buffer out(n_heads * head_dim, 0, (*seed)++);
  // The last span alone, then the others as one range: a span's results do not depend
  // on its range, and each writes only its own positions and partials.
  a.prefetch_values = true;
  a.first_span = n_spans - 1;
  a.num_spans = 1;
  cache.Attend(a, probs.data(), partial.data());
  if (n_spans > 1) {
    a.first_span = 0;
    a.num_spans = n_spans - 1;
    cache.Attend(a, probs.data(), partial.data());
  }
  // Span by span, without the prefetch hint: bitwise the same partials and, after the
  // merge, probs.
  test::Buffer one_probs(n_heads * probs_stride, 1, (*seed)++);
  test::Buffer one_partial(n_spans * partial_floats, 1, (*seed)++);
  test::Buffer one_out(n_heads * head_dim, 0, (*seed)++);
  a.prefetch_values = false;
  a.num_spans = 1;
  for (size_t c = 0; c < n_spans; ++c) {
    a.first_span = c;
    cache.Attend(a, one_probs.data(), one_partial.data());
  }
  for (size_t i = 0; i < n_spans * partial_floats; ++i) {
    ASSERT_EQ(one_partial[i], partial[i]) << "partial " << i;
  }
  // The rows in a ring that wraps mid-way (a sliding layer's cache): bitwise the same.
  test::Buffer ring_probs(n_heads * probs_stride, 1, (*seed)++);
  test::Buffer ring_partial(n_spans * partial_floats, 1, (*seed)++);
  a.first_span = 0;
  a.num_spans = n_spans;
  cache.AttendRing(a, n_pos / 2 + 1, n_pos + 2, ring_probs.data(), ring_partial.data());
  for (size_t i = 0; i < n_spans * partial_floats; ++i) {
    ASSERT_EQ(ring_partial[i], partial[i]) << "ring partial " << i;
  }
  for (size_t h = 0; h < n_heads; ++h) {
    for (size_t t = 0; t < n_pos; ++t) {
      ASSERT_EQ(ring_probs[h * probs_stride + t], one_probs[h * probs_stride + t]);
    }
  }
  AttendMerge(one_partial.data(), n_spans, span, n_pos, head_dim, n_heads,
              one_probs.data(), probs_stride, one_out.data());
  // Without probs the merge writes the same out.
  test::Buffer out_only(n_heads * head_dim, 0, (*seed)++);
  AttendMerge(partial.data(), n_spans, span, n_pos, head_dim, n_heads, nullptr,
              probs_stride, out_only.data());
  AttendMerge(partial.data(), n_spans, span, n_pos, head_dim, n_heads, probs.data(),
              probs_stride, out.data());
  for (size_t i = 0; i < n_heads * head_dim; ++i) {
    ASSERT_EQ(out_only[i], out[i]) << "index " << i;
    ASSERT_EQ(one_out[i], out[i]) << "index " << i;
  }
  for (size_t h = 0; h < n_heads; ++h) {
    for (size_t t = 0; t < n_pos; ++t) {
      ASSERT_EQ(one_probs[h * probs_stride + t], probs[h * probs_stride + t]);
    }
  }
  for (size_t h = 0; h < n_heads; ++h) {
    SCOPED_TRACE(testing::Message()
                 << "type " << static_cast<int>(cache.type) << " heads " << n_heads << "/"
                 << cache.n_kv << " head_dim " << head_dim << " n_pos " << n_pos
                 << " span " << span << " head " << h);
    test::ExpectClose(probs.data() + h * probs_stride, expected_probs.data() + h * n_pos,
                      n_pos, 1e-6f, 1e-5f, "probs");
    test::ExpectClose(out.data() + h * head_dim, expected.data() + h * head_dim, head_dim,
                      1e-5f, 1e-4f, "out");
  }
}

struct Heads {
  size_t n_heads, n_kv_heads;
};

// Every span split of one cache.
void CheckSpanSplits(const Cache& cache, uint32_t* seed) {
  const size_t n_pos = cache.n_pos;
  const size_t fewest = (n_pos + kMaxAttentionSpans - 1) / kMaxAttentionSpans;
  for (size_t span :
       {AttentionSpan(n_pos), n_pos, fewest, size_t{3}, size_t{1}, n_pos / 2 + 1}) {
    if (span == 0 || (n_pos + span - 1) / span > kMaxAttentionSpans) continue;
    CheckAttendSpans(cache, span, seed);
    if (::testing::Test::HasFailure()) return;
  }
}

// f32 caches: 16 heads over 8 KV heads of 65 floats and 300 positions take several runs
// of spans (kRunBytes) in one call.
void TestAttendSpans() {
  uint32_t seed = 41;
  for (const Heads heads :
       {Heads{1, 1}, Heads{3, 3}, Heads{4, 2}, Heads{6, 1}, Heads{16, 8}}) {
    for (size_t head_dim : {1, 3, 8, 16, 20, 64, 65}) {
      for (size_t n_pos : {1, 2, 7, 33, 100, 300}) {
        const Cache cache(KvType::kF32, heads.n_heads, heads.n_kv_heads, head_dim, n_pos,
                          seed);
        seed += 3;
        CheckSpanSplits(cache, &seed);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

// f16 and q8 caches (fewer shapes, sized for emulation: the code around the loads is
// the f32 kernel's). q8 head sizes cover a short group alone (3), one whole group (32),
// whole groups then a short one (48, 65), and heads of whole 64-value chunks (64, 128:
// the scores of a row at once with AVX-512 VNNI, rows of 1 to 16 chunks).
void TestAttendSpansF16AndQ8() {
  uint32_t seed = 97;
  for (const KvType type : {KvType::kF16, KvType::kQ8}) {
    for (const Heads heads : {Heads{1, 1}, Heads{4, 2}, Heads{16, 8}}) {
      for (size_t head_dim : {3, 32, 48, 64, 65, 128}) {
        for (size_t n_pos : {1, 7, 33, 300}) {
          if (heads.n_heads == 16 && n_pos != 300) continue;  // the long runs only
          const Cache cache(type, heads.n_heads, heads.n_kv_heads, head_dim, n_pos, seed);
          seed += 3;
          CheckSpanSplits(cache, &seed);
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

// The q8 encoding bitwise against the scalar twin: odd head sizes, a padded and an
// unpadded head stride, all-zero groups, and values at exact half steps (ties to even).
void TestQuantizeKv() {
  uint32_t seed = 7;
  for (size_t head_dim : {1, 3, 8, 31, 32, 33, 48, 64, 65, 100, 128}) {
    for (size_t n_heads : {1, 3}) {
      const size_t groups = KvGroups(head_dim);
      for (size_t head_stride : {head_dim, groups * kKvGroup}) {
        test::Buffer x(n_heads * head_dim, 1, seed++, 3.0f);
        if (head_dim >= 8) {
          // A zero group, then a group of scale 1 whose other values are exact halves.
          for (size_t i = 0; i < head_dim && i < kKvGroup; ++i) x[i] = 0.0f;
          x[n_heads * head_dim - 1] = 127.0f;
          for (size_t i = (n_heads - 1) * head_dim; i + 1 < n_heads * head_dim; ++i) {
            x[i] = static_cast<float>(static_cast<int>(i % 9) - 4) + 0.5f;
          }
        }
        const size_t n_q = n_heads * head_stride + kKvGroup;
        std::vector<int8_t> q(n_q, 99), expected_q(n_q, 99);
        std::vector<float> scales(n_heads * groups), expected_scales(n_heads * groups);
        QuantizeKv(x.data(), n_heads, head_dim, head_stride, q.data(), scales.data());
        reference::QuantizeKv(x.data(), n_heads, head_dim, head_stride, expected_q.data(),
                              expected_scales.data());
        for (size_t i = 0; i < n_q; ++i) {
          ASSERT_EQ(q[i], expected_q[i]) << "head_dim " << head_dim << " index " << i;
        }
        for (size_t i = 0; i < n_heads * groups; ++i) {
          ASSERT_EQ(scales[i], expected_scales[i]) << "head_dim " << head_dim;
        }
      }
    }
  }
}

// The runtime's span: a multiple of 16 positions, at most kMaxAttentionSpans spans.
void TestAttentionSpan() {
  for (size_t n_pos = 1; n_pos < 5000; ++n_pos) {
    const size_t span = AttentionSpan(n_pos);
    ASSERT_EQ(span % 16, 0u) << n_pos;
    ASSERT_LE((n_pos + span - 1) / span, kMaxAttentionSpans) << n_pos;
    // The smallest such span: one 16 positions shorter would need too many spans.
    if (span > 16) {
      ASSERT_GT((n_pos + span - 17) / (span - 16), kMaxAttentionSpans) << n_pos;
    }
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_BEFORE_TEST(AttentionTest);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttendSpans);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttendSpansF16AndQ8);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestQuantizeKv);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttentionSpan);
}  // namespace ember::kernels
#endif
