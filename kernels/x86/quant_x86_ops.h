// The x86 vector operations the int8 kernels are written with (quant_x86-inl.h for
// q8/q4, kquant_x86-inl.h for the K-quants), one struct per path: 256-bit (AVX2,
// AVX-VNNI) or 512-bit (AVX-512BW, AVX-512 VNNI) vectors, and each path's int8 products.
// Every member carries its path's target attribute (and always_inline), so it inlines
// into kernels compiled for that path only. Included by the x86 kernel files only (after
// <immintrin.h>): quant_x86.cc, kquant_x86.cc.
//
// The products, per 4 inputs of a row (one int32 lane):
//   vpdpbusd (VNNI): sum of 4 u8 x s8 products into int32, exact. q8 is stored q + 128
//     and q4 q + 8 (unsigned), so the dot starts at -offset * sum(xq).
//   vpmaddubsw (AVX2, AVX-512BW): u8 x s8 products summed in pairs into int16 with
//     saturation, then vpmaddwd by 1 sums the pairs into int32. Exact only if a pair
//     stays within int16, for activations |x| <= 127 (QuantizeActs' range):
//     q8: the unsigned q + 128 (up to 255) times x can reach 2 x 255 x 127 = 64770: it
//         would saturate. So q8 goes signed: |q| (<= 128, -128 included, which GGUF's
//         Q8_0 may hold) times x with q's sign: a pair is at most 2 x 128 x 127 = 32512
//         <= 32767, exact, and no offset.
//     q4: q + 8 <= 15, a pair at most 2 x 15 x 127 = 3810; a group adds 8 pairs per int16
//         lane (2 inputs of each of 8 chunks: 16 inputs) before vpmaddwd, at most 30480
//         in magnitude, exact.
//     DotSmall (K-quants: unsigned values <= 63): a pair at most 2 x 63 x 127 = 16002,
//         widened to int32 at once.
#ifndef EMBER_KERNELS_X86_QUANT_X86_OPS_H_
#define EMBER_KERNELS_X86_QUANT_X86_OPS_H_

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

// GCC 12 warns that the _mm512_undefined_* inside its own intrinsics (cvtepi32_ps,
// cvtph_ps, srai_epi32) may be used uninitialized: a false positive, which Highway's
// headers silence the same way for their own code. (This header is included only by
// the x86 kernel files.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ember::kernels::x86 {

// How far ahead of the values it reads decode prefetches (quant_x86-inl.h's Block).
constexpr uintptr_t kDecodePrefetchBytes = 16384;

// Each path's target features: its kernels' attribute (quant_x86.cc, kquant_x86.cc).
#define EMBER_X86_AVX2 "avx2,fma,f16c"
#define EMBER_X86_AVX_VNNI EMBER_X86_AVX2 ",avxvnni"
#define EMBER_X86_AVX512BW "avx512f,avx512bw,avx512vl,avx512dq," EMBER_X86_AVX2
#define EMBER_X86_AVX512_VNNI EMBER_X86_AVX512BW ",avx512vnni"

#define EMBER_X86_256 __attribute__((target(EMBER_X86_AVX2), always_inline))
#define EMBER_X86_512 __attribute__((target(EMBER_X86_AVX512BW), always_inline))

// What every 256-bit path shares: a chunk is two vectors of 8 rows.
struct Base256 {
  using VI = __m256i;
  using VF = __m256;
  static constexpr int kRows = 8, kVecs = 2;
  static constexpr size_t kBytes = 32;
  EMBER_X86_256 static VI Load(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  EMBER_X86_256 static VI Broadcast4(const int8_t* x4) {
    int32_t bits;
    memcpy(&bits, x4, 4);
    return _mm256_set1_epi32(bits);
  }
  EMBER_X86_256 static VI Set32(int32_t v) { return _mm256_set1_epi32(v); }
  EMBER_X86_256 static VF ZeroF() { return _mm256_setzero_ps(); }
  EMBER_X86_256 static VF LoadScales(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  EMBER_X86_256 static VF MulF(VF ws, float xs) {
    return _mm256_mul_ps(ws, _mm256_set1_ps(xs));
  }
  EMBER_X86_256 static VF MulAddF(VI dot, VF scale, VF acc) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc);
  }
  // The first n lanes of v (nothing past them is touched).
  EMBER_X86_256 static void StoreRows(VF v, size_t n, float* out) {
    if (n >= static_cast<size_t>(kRows)) {
      _mm256_storeu_ps(out, v);
    } else {
      alignas(32) float buf[kRows];
      _mm256_store_ps(buf, v);
      memcpy(out, buf, n * sizeof(float));
    }
  }
  EMBER_X86_256 static VI Nibbles() { return _mm256_set1_epi8(0x0F); }
  // For the K-quants.
  EMBER_X86_256 static void Store(uint8_t* p, VI v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  EMBER_X86_256 static VI Set8(uint8_t v) {
    return _mm256_set1_epi8(static_cast<char>(v));
  }
  EMBER_X86_256 static VI And(VI a, VI b) { return _mm256_and_si256(a, b); }
  EMBER_X86_256 static VI Or(VI a, VI b) { return _mm256_or_si256(a, b); }
  EMBER_X86_256 static VI Add32(VI a, VI b) { return _mm256_add_epi32(a, b); }
  EMBER_X86_256 static VI MulLo32(VI a, VI b) { return _mm256_mullo_epi32(a, b); }
  template <int kBits>
  EMBER_X86_256 static VI ShiftLeft16(VI v) {
    return _mm256_slli_epi16(v, kBits);
  }
  template <int kBits>
  EMBER_X86_256 static VI ShiftRight16(VI v) {
    return _mm256_srli_epi16(v, kBits);
  }
  // v shifted left by `left` bits (right by -left) in 16-bit lanes.
  EMBER_X86_256 static VI Shift16(VI v, int left) {
    return left >= 0 ? _mm256_sll_epi16(v, _mm_cvtsi32_si128(left))
                     : _mm256_srl_epi16(v, _mm_cvtsi32_si128(-left));
  }
  // kRows bytes at p as int32 lanes, zero- or sign-extended.
  EMBER_X86_256 static VI Bytes(const uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  EMBER_X86_256 static VI SignedBytes(const uint8_t* p) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  EMBER_X86_256 static VF ToFloat(VI v) { return _mm256_cvtepi32_ps(v); }
  EMBER_X86_256 static VF Mul(VF a, VF b) { return _mm256_mul_ps(a, b); }
  // acc - a * b, fused.
  EMBER_X86_256 static VF NegMulAddF(VF a, float b, VF acc) {
    return _mm256_fnmadd_ps(a, _mm256_set1_ps(b), acc);
  }
};

// What every 512-bit path shares: a chunk is one vector of 16 rows.
struct Base512 {
  using VI = __m512i;
  using VF = __m512;
  static constexpr int kRows = 16, kVecs = 1;
  static constexpr size_t kBytes = 64;
  EMBER_X86_512 static VI Load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  EMBER_X86_512 static VI Broadcast4(const int8_t* x4) {
    int32_t bits;
    memcpy(&bits, x4, 4);
    return _mm512_set1_epi32(bits);
  }
  EMBER_X86_512 static VI Set32(int32_t v) { return _mm512_set1_epi32(v); }
  EMBER_X86_512 static VF ZeroF() { return _mm512_setzero_ps(); }
  EMBER_X86_512 static VF LoadScales(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  EMBER_X86_512 static VF MulF(VF ws, float xs) {
    return _mm512_mul_ps(ws, _mm512_set1_ps(xs));
  }
  EMBER_X86_512 static VF MulAddF(VI dot, VF scale, VF acc) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc);
  }
  EMBER_X86_512 static void StoreRows(VF v, size_t n, float* out) {
    if (n >= static_cast<size_t>(kRows)) {
      _mm512_storeu_ps(out, v);
    } else {
      _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << n) - 1), v);
    }
  }
  EMBER_X86_512 static VI Nibbles() { return _mm512_set1_epi8(0x0F); }
  // For the K-quants.
  EMBER_X86_512 static void Store(uint8_t* p, VI v) { _mm512_storeu_si512(p, v); }
  EMBER_X86_512 static VI Set8(uint8_t v) {
    return _mm512_set1_epi8(static_cast<char>(v));
  }
  EMBER_X86_512 static VI And(VI a, VI b) { return _mm512_and_si512(a, b); }
  EMBER_X86_512 static VI Or(VI a, VI b) { return _mm512_or_si512(a, b); }
  EMBER_X86_512 static VI Add32(VI a, VI b) { return _mm512_add_epi32(a, b); }
  EMBER_X86_512 static VI MulLo32(VI a, VI b) { return _mm512_mullo_epi32(a, b); }
  template <int kBits>
  EMBER_X86_512 static VI ShiftLeft16(VI v) {
    return _mm512_slli_epi16(v, kBits);
  }
  template <int kBits>
  EMBER_X86_512 static VI ShiftRight16(VI v) {
    return _mm512_srli_epi16(v, kBits);
  }
  EMBER_X86_512 static VI Shift16(VI v, int left) {
    return left >= 0 ? _mm512_sll_epi16(v, _mm_cvtsi32_si128(left))
                     : _mm512_srl_epi16(v, _mm_cvtsi32_si128(-left));
  }
  EMBER_X86_512 static VI Bytes(const uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  EMBER_X86_512 static VI SignedBytes(const uint8_t* p) {
    return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  EMBER_X86_512 static VF ToFloat(VI v) { return _mm512_cvtepi32_ps(v); }
  EMBER_X86_512 static VF Mul(VF a, VF b) { return _mm512_mul_ps(a, b); }
  EMBER_X86_512 static VF NegMulAddF(VF a, float b, VF acc) {
    return _mm512_fnmadd_ps(a, _mm512_set1_ps(b), acc);
  }
};

// vpmaddubsw products (see the top comment for the ranges that keep them exact).
struct Avx2Ops : Base256 {
  static constexpr int32_t kQ8Offset = 0;
  struct Q8Weights {
    VI magnitude, sign;  // |q| as u8, and q (signed)
  };
  EMBER_X86_256 static Q8Weights PrepareQ8(VI raw) {
    const VI q = _mm256_xor_si256(raw, _mm256_set1_epi8(static_cast<char>(0x80)));
    return {_mm256_abs_epi8(q), q};
  }
  // x with q's sign, times |q|: q x per byte, pairs into int16, then into int32.
  EMBER_X86_256 static VI DotQ8(VI acc, Q8Weights w, VI x) {
    const VI pairs = _mm256_maddubs_epi16(w.magnitude, _mm256_sign_epi8(x, w.sign));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  using Q4Acc = VI;  // int16 pair sums of the group
  EMBER_X86_256 static Q4Acc ZeroQ4() { return _mm256_setzero_si256(); }
  EMBER_X86_256 static void SplitQ4(VI raw, VI* lo, VI* hi) {
    *lo = _mm256_and_si256(raw, Nibbles());
    *hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), Nibbles());
  }
  EMBER_X86_256 static Q4Acc DotQ4(Q4Acc acc, VI lo, VI xlo, VI hi, VI xhi) {
    return _mm256_add_epi16(acc, _mm256_add_epi16(_mm256_maddubs_epi16(lo, xlo),
                                                  _mm256_maddubs_epi16(hi, xhi)));
  }
  EMBER_X86_256 static VI FinishQ4(Q4Acc acc, VI start) {
    return _mm256_add_epi32(start, _mm256_madd_epi16(acc, _mm256_set1_epi16(1)));
  }
  // acc + the 4-way dots of unsigned w (<= 63) with x.
  EMBER_X86_256 static VI DotSmall(VI acc, VI w, VI x) {
    return _mm256_add_epi32(
        acc, _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), _mm256_set1_epi16(1)));
  }
};

struct Avx512BwOps : Base512 {
  static constexpr int32_t kQ8Offset = 0;
  struct Q8Weights {
    VI magnitude;
    __mmask64 negative;  // q < 0
  };
  EMBER_X86_512 static Q8Weights PrepareQ8(VI raw) {
    const VI q = _mm512_xor_si512(raw, _mm512_set1_epi8(static_cast<char>(0x80)));
    return {_mm512_abs_epi8(q), _mm512_movepi8_mask(q)};
  }
  // AVX-512 has no vpsignb: x negated where q < 0 (where q = 0, |q| = 0 anyway).
  EMBER_X86_512 static VI DotQ8(VI acc, Q8Weights w, VI x) {
    const VI signed_x = _mm512_mask_sub_epi8(x, w.negative, _mm512_setzero_si512(), x);
    const VI pairs = _mm512_maddubs_epi16(w.magnitude, signed_x);
    return _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)));
  }
  using Q4Acc = VI;
  EMBER_X86_512 static Q4Acc ZeroQ4() { return _mm512_setzero_si512(); }
  EMBER_X86_512 static void SplitQ4(VI raw, VI* lo, VI* hi) {
    *lo = _mm512_and_si512(raw, Nibbles());
    *hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), Nibbles());
  }
  EMBER_X86_512 static Q4Acc DotQ4(Q4Acc acc, VI lo, VI xlo, VI hi, VI xhi) {
    return _mm512_add_epi16(acc, _mm512_add_epi16(_mm512_maddubs_epi16(lo, xlo),
                                                  _mm512_maddubs_epi16(hi, xhi)));
  }
  EMBER_X86_512 static VI FinishQ4(Q4Acc acc, VI start) {
    return _mm512_add_epi32(start, _mm512_madd_epi16(acc, _mm512_set1_epi16(1)));
  }
  EMBER_X86_512 static VI DotSmall(VI acc, VI w, VI x) {
    return _mm512_add_epi32(
        acc, _mm512_madd_epi16(_mm512_maddubs_epi16(w, x), _mm512_set1_epi16(1)));
  }
};

// vpdpbusd products: the stored unsigned bytes directly. q4's high nibbles are masked
// in place (16 x their value) into a second accumulator, divided by 16 (exactly) at the
// end of the group: no shift per block, and two shorter dependency chains.
#define EMBER_VNNI_OPS(Base, ATTR, DPBUSD, AND, SRAI, ADD, SET8)                \
  static constexpr int32_t kQ8Offset = 128;                                     \
  using Q8Weights = Base::VI;                                                   \
  ATTR static Q8Weights PrepareQ8(VI raw) { return raw; }                       \
  ATTR static VI DotQ8(VI acc, Q8Weights w, VI x) { return DPBUSD(acc, w, x); } \
  struct Q4Acc {                                                                \
    VI low, high;                                                               \
  };                                                                            \
  ATTR static Q4Acc ZeroQ4() { return {Set32(0), Set32(0)}; }                   \
  ATTR static void SplitQ4(VI raw, VI* lo, VI* hi) {                            \
    *lo = AND(raw, Nibbles());                                                  \
    *hi = AND(raw, SET8(static_cast<char>(0xF0)));                              \
  }                                                                             \
  ATTR static Q4Acc DotQ4(Q4Acc acc, VI lo, VI xlo, VI hi, VI xhi) {            \
    return {DPBUSD(acc.low, lo, xlo), DPBUSD(acc.high, hi, xhi)};               \
  }                                                                             \
  ATTR static VI FinishQ4(Q4Acc acc, VI start) {                                \
    return ADD(ADD(start, acc.low), SRAI(acc.high, 4));                         \
  }                                                                             \
  ATTR static VI DotSmall(VI acc, VI w, VI x) { return DPBUSD(acc, w, x); }

struct AvxVnniOps : Base256 {
  EMBER_VNNI_OPS(Base256, __attribute__((target(EMBER_X86_AVX_VNNI), always_inline)),
                 _mm256_dpbusd_avx_epi32, _mm256_and_si256, _mm256_srai_epi32,
                 _mm256_add_epi32, _mm256_set1_epi8)
};

struct Avx512VnniOps : Base512 {
  EMBER_VNNI_OPS(Base512, __attribute__((target(EMBER_X86_AVX512_VNNI), always_inline)),
                 _mm512_dpbusd_epi32, _mm512_and_si512, _mm512_srai_epi32,
                 _mm512_add_epi32, _mm512_set1_epi8)
};

#undef EMBER_VNNI_OPS
#undef EMBER_X86_256
#undef EMBER_X86_512

}  // namespace ember::kernels::x86

#endif  // EMBER_KERNELS_X86_QUANT_X86_OPS_H_
