// Tests multi-head attention over a strided KV cache on every compiled target: spans of
// positions and their merge against the scalar reference.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/attention-inl.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

// Spans + merge against the scalar reference (one softmax over all positions), for the
// runtime's span and for other splits: one span, spans of 1 to 3 positions, and spans
// that leave a short last one.
void TestAttendSpans() {
  uint32_t seed = 41;
  struct Heads {
    size_t n_heads, n_kv_heads;
  };
  // 16 heads over 8 KV heads of 65 floats: 300 positions take several runs of spans
  // (kRunBytes) in one call.
  for (const Heads heads :
       {Heads{1, 1}, Heads{3, 3}, Heads{4, 2}, Heads{6, 1}, Heads{16, 8}}) {
    for (size_t head_dim : {1, 3, 8, 16, 20, 64, 65}) {
      for (size_t n_pos : {1, 2, 7, 33, 100, 300}) {
        const size_t group = heads.n_heads / heads.n_kv_heads;
        // One extra column so rows do not start on a vector boundary.
        const size_t kv_stride = heads.n_kv_heads * head_dim + 1;
        const size_t probs_stride = n_pos + 3;
        const size_t partial_floats = AttentionPartialFloats(head_dim) * heads.n_heads;
        test::Buffer q(heads.n_heads * head_dim, 1, seed++);
        test::Buffer keys(n_pos * kv_stride, 2, seed++, 2.0f);
        test::Buffer values(n_pos * kv_stride, 3, seed++);
        const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
        // Soft-capped scores (Gemma 2) for half the lengths: the cap bends them.
        const float softcap = n_pos % 2 == 0 ? 1.5f : 0.0f;
        std::vector<float> expected_probs(heads.n_heads * n_pos),
            expected(heads.n_heads * head_dim);
        for (size_t h = 0; h < heads.n_heads; ++h) {
          const size_t kv_col = h / group * head_dim;
          reference::Attend(q.data() + h * head_dim, keys.data() + kv_col,
                            values.data() + kv_col, kv_stride, n_pos, head_dim, scale,
                            softcap, expected_probs.data() + h * n_pos,
                            expected.data() + h * head_dim);
        }
        const size_t fewest = (n_pos + kMaxAttentionSpans - 1) / kMaxAttentionSpans;
        for (size_t span :
             {AttentionSpan(n_pos), n_pos, fewest, size_t{3}, size_t{1}, n_pos / 2 + 1}) {
          const size_t n_spans = (n_pos + span - 1) / span;
          if (span == 0 || n_spans > kMaxAttentionSpans) continue;
          test::Buffer probs(heads.n_heads * probs_stride, 1, seed++);
          test::Buffer partial(n_spans * partial_floats, 1, seed++);
          test::Buffer out(heads.n_heads * head_dim, 0, seed++);
          // The last span alone, then the others as one range: a span's results do not
          // depend on its range, and each writes only its own positions and partials.
          AttendSpans(q.data(), keys.data(), values.data(), kv_stride, n_pos, span,
                      n_spans - 1, 1, head_dim, heads.n_heads, group, scale, softcap,
                      probs.data(), probs_stride, partial.data(),
                      /*prefetch_values=*/true);
          if (n_spans > 1) {
            AttendSpans(q.data(), keys.data(), values.data(), kv_stride, n_pos, span, 0,
                        n_spans - 1, head_dim, heads.n_heads, group, scale, softcap,
                        probs.data(), probs_stride, partial.data(),
                        /*prefetch_values=*/true);
          }
          // Span by span, without the prefetch hint: bitwise the same partials and,
          // after the merge, probs.
          test::Buffer one_probs(heads.n_heads * probs_stride, 1, seed++);
          test::Buffer one_partial(n_spans * partial_floats, 1, seed++);
          test::Buffer one_out(heads.n_heads * head_dim, 0, seed++);
          for (size_t c = 0; c < n_spans; ++c) {
            AttendSpans(q.data(), keys.data(), values.data(), kv_stride, n_pos, span, c,
                        1, head_dim, heads.n_heads, group, scale, softcap,
                        one_probs.data(), probs_stride, one_partial.data(),
                        /*prefetch_values=*/false);
          }
          for (size_t i = 0; i < n_spans * partial_floats; ++i) {
            ASSERT_EQ(one_partial[i], partial[i]) << "partial " << i;
          }
          AttendMerge(one_partial.data(), n_spans, span, n_pos, head_dim, heads.n_heads,
                      one_probs.data(), probs_stride, one_out.data());
          // Without probs the merge writes the same out.
          test::Buffer out_only(heads.n_heads * head_dim, 0, seed++);
          AttendMerge(partial.data(), n_spans, span, n_pos, head_dim, heads.n_heads,
                      nullptr, probs_stride, out_only.data());
          AttendMerge(partial.data(), n_spans, span, n_pos, head_dim, heads.n_heads,
                      probs.data(), probs_stride, out.data());
          for (size_t i = 0; i < heads.n_heads * head_dim; ++i) {
            ASSERT_EQ(out_only[i], out[i]) << "index " << i;
            ASSERT_EQ(one_out[i], out[i]) << "index " << i;
          }
          for (size_t h = 0; h < heads.n_heads; ++h) {
            for (size_t t = 0; t < n_pos; ++t) {
              ASSERT_EQ(one_probs[h * probs_stride + t], probs[h * probs_stride + t]);
            }
          }
          for (size_t h = 0; h < heads.n_heads; ++h) {
            SCOPED_TRACE(testing::Message()
                         << "heads " << heads.n_heads << "/" << heads.n_kv_heads
                         << " head_dim " << head_dim << " n_pos " << n_pos << " span "
                         << span << " head " << h);
            test::ExpectClose(probs.data() + h * probs_stride,
                              expected_probs.data() + h * n_pos, n_pos, 1e-6f, 1e-5f,
                              "probs");
            test::ExpectClose(out.data() + h * head_dim, expected.data() + h * head_dim,
                              head_dim, 1e-5f, 1e-4f, "out");
          }
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
HWY_EXPORT_AND_TEST_P(AttentionTest, TestAttentionSpan);
}  // namespace ember::kernels
#endif
