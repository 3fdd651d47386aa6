// x86 int8 q8/q4 kernels beyond Highway (quant_x86.h): the products of quant_x86-inl.h
// for four paths, each a namespace whose functions carry its target attribute.
//
// Why intrinsics: Highway 1.0.3 has no op for vpdpbusd (u8 x s8 4-way dot products into
// int32 lanes) nor for vpmaddubsw, and its AVX2 target cannot name AVX-VNNI. Which path
// runs is the ISA tier's choice (isa.h), checked against CPUID, not Highway's target.
//
// The products, per 4 inputs of a row (one int32 lane):
//   vpdpbusd (VNNI): sum of 4 u8 x s8 products into int32, exact. q8 is stored q + 128
//     and q4 q + 8 (unsigned), so the dot starts at -offset * sum(xq).
//   vpmaddubsw (AVX2, AVX-512BW): u8 x s8 products summed in pairs into int16 with
//     saturation, then vpmaddwd by 1 sums the pairs into int32. Exact only if a pair
//     stays within int16:
//     q8: the unsigned q + 128 (up to 255) times x (|x| <= 127) can reach 2 x 255 x 127 =
//         64770: it would saturate. So q8 goes signed: |q| (<= 128, -128 included, which
//         GGUF's Q8_0 may hold) times x with q's sign: a pair is at most 2 x 128 x 127 =
//         32512 <= 32767, exact, and no offset.
//     q4: q + 8 <= 15, a pair at most 2 x 15 x 127 = 3810; a group adds 8 pairs per int16
//         lane (2 inputs of each of 8 chunks: 16 inputs) before vpmaddwd, at most 30480
//         in magnitude, exact.
#include "kernels/quant_x86.h"

#include <cpuid.h>
#include <immintrin.h>

#include <cstddef>
#include <cstring>
#include <initializer_list>

#include "hwy/detect_targets.h"
#include "kernels/quant_layout.h"

// GCC 12 warns that the _mm512_undefined_* inside its own intrinsics (cvtepi32_ps,
// cvtph_ps, srai_epi32) may be used uninitialized: a false positive, which Highway's
// headers silence the same way for their own code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ember::kernels {
namespace {

#define EMBER_X86_256 __attribute__((target("avx2,fma,f16c"), always_inline))
#define EMBER_X86_512                                                        \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c"), \
                 always_inline))

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
  }

#define EMBER_X86_AVX_VNNI __attribute__((target("avx2,fma,f16c,avxvnni"), always_inline))
struct AvxVnniOps : Base256 {
  EMBER_VNNI_OPS(Base256, EMBER_X86_AVX_VNNI, _mm256_dpbusd_avx_epi32, _mm256_and_si256,
                 _mm256_srai_epi32, _mm256_add_epi32, _mm256_set1_epi8)
};

#define EMBER_X86_AVX512_VNNI                                                           \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c"), \
                 always_inline))
struct Avx512VnniOps : Base512 {
  EMBER_VNNI_OPS(Base512, EMBER_X86_AVX512_VNNI, _mm512_dpbusd_epi32, _mm512_and_si512,
                 _mm512_srai_epi32, _mm512_add_epi32, _mm512_set1_epi8)
};

// One namespace per path: quant_x86-inl.h's templates with that path's Ops and target
// attribute (the attribute without always_inline: Panels is noinline).
namespace avx2 {
using Ops = Avx2Ops;
#define EMBER_X86 __attribute__((target("avx2,fma,f16c")))
#include "kernels/quant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx2

namespace avx_vnni {
using Ops = AvxVnniOps;
#define EMBER_X86 __attribute__((target("avx2,fma,f16c,avxvnni")))
#include "kernels/quant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx_vnni

namespace avx512bw {
using Ops = Avx512BwOps;
#define EMBER_X86 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#include "kernels/quant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx512bw

namespace avx512_vnni {
using Ops = Avx512VnniOps;
#define EMBER_X86 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#include "kernels/quant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx512_vnni

}  // namespace

// Prefill's block: 512-bit paths 2 panels x 4 tokens (8 int32 + 8 f32 accumulators of 32
// registers; 2x6, 3x4, 4x3 measured the same on AVX-512 VNNI); 256-bit paths have 16
// registers and two vectors per panel: 1 panel x 4 tokens.
bool X86Int8Kernels(Int8Feature path, Int8Kernels* kernels) {
  switch (path) {
    case kInt8Avx2:
      *kernels = avx2::PathKernels<1>("avx2");
      return true;
    case kInt8AvxVnni:
      *kernels = avx_vnni::PathKernels<1>("avx-vnni");
      return true;
    case kInt8Avx512Bw:
      *kernels = avx512bw::PathKernels<2>("avx512bw");
      return true;
    case kInt8Avx512Vnni:
      *kernels = avx512_vnni::PathKernels<2>("avx512-vnni");
      return true;
    default:
      return false;
  }
}

bool FillX86Int8Kernels(KernelTable* table, uint32_t int8) {
  for (Int8Feature path : {kInt8Avx512Vnni, kInt8AvxVnni, kInt8Avx512Bw, kInt8Avx2}) {
    Int8Kernels k;
    if ((int8 & path) == 0 || !X86Int8Kernels(path, &k)) continue;
    UseInt8Kernels(table, k);
    return true;
  }
  return false;
}

// Highway's targets already say the OS saves the vector state and the CPU has AVX2
// (HWY_AVX2) and AVX-512 F/VL/DQ/BW (HWY_AVX3); the VNNI bits come from CPUID leaf 7:
// subleaf 0 ECX bit 11 (AVX512_VNNI), subleaf 1 EAX bit 4 (AVX_VNNI).
uint32_t X86Int8Features(int64_t hwy_supported) {
  uint32_t features = 0;
  unsigned eax, ebx, ecx, edx;
  const bool leaf7 = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0;
  const bool avx512_vnni = leaf7 && (ecx & (1u << 11)) != 0;
  const bool avx_vnni = leaf7 && eax >= 1 &&
                        __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) &&
                        (eax & (1u << 4)) != 0;
  if ((hwy_supported & HWY_AVX2) != 0) {
    features |= kInt8Avx2;
    if (avx_vnni) features |= kInt8AvxVnni;
  }
  if ((hwy_supported & HWY_AVX3) != 0) {
    features |= kInt8Avx512Bw;
    if (avx512_vnni) features |= kInt8Avx512Vnni;
  }
  return features;
}

}  // namespace ember::kernels
