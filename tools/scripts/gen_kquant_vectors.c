// Writes kernels/testdata/kquant_vectors.bin: llama.cpp's own decoding and quantizing
// of GGML's Q4_K, Q5_K and Q6_K, the oracle kernels/kquant_layout_test.cc checks ember
// against. Not part of the build; needs a llama.cpp build (ggml's public API only):
//
//   B=$LLAMA/build-native/bin; gcc -O2 -I$LLAMA/ggml/include -o /tmp/gen
//     tools/scripts/gen_kquant_vectors.c -L$B -lggml-base -Wl,-rpath,$B
//   /tmp/gen kernels/testdata/kquant_vectors.bin
// (made with llama.cpp c392e50, the checkout of /work/scratch/llama.cpp).
//
// The inputs come from a PRNG both sides implement (kquant_layout_test.cc's
// VectorInputs); the file holds only llama.cpp's outputs, little-endian:
//   "EKQV", uint32 version 1, then for Q4_K, Q5_K, Q6_K in that order:
//     uint32 blocks (4), blocks * 256 float32: to_float of the PRNG's blocks;
//     uint32 rows (4), uint32 cols (512), rows * row bytes: ggml_quantize_chunk of the
//     PRNG's matrix (no importance matrix, as llama-quantize without --imatrix).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"

static uint32_t state;
static uint32_t Next(void) {  // xorshift32
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}
static float Uniform(void) { return (float)(Next() >> 8) * (2.0f / 16777216.0f) - 1.0f; }

// Random bytes with d (and dmin) set to f16 values in [2^-9, 2^-7).
static void Blocks(int kind, uint8_t* out, int blocks, int block_bytes) {
  state = 1u + (uint32_t)kind;
  for (int i = 0; i < blocks * block_bytes; ++i) out[i] = (uint8_t)Next();
  for (int b = 0; b < blocks; ++b) {
    uint8_t* block = out + b * block_bytes;
    const int d_at = kind == 2 ? 208 : 0;
    for (int h = 0; h < (kind == 2 ? 1 : 2); ++h) {
      const uint16_t bits = (uint16_t)(0x1800u + Next() % 0x800u);
      memcpy(block + d_at + 2 * h, &bits, 2);
    }
  }
}

// Rows of 512: uniform; uniform + 0.5; uniform / 1000 with a zero and a constant
// sub-block; a sum of four uniforms (bell-shaped) times 2.
static void Matrix(int kind, float* m, int rows, int cols) {
  state = 100u + (uint32_t)kind;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      float v = Uniform();
      if (r == 1) v += 0.5f;
      if (r == 2) v = c / 32 == 3 ? 0.0f : c / 32 == 5 ? 0.25f : v / 1000;
      for (int i = 0; r == 3 && i < 3; ++i) v += Uniform();  // one call per statement
      if (r == 3) v *= 2;
      m[r * cols + c] = v;
    }
  }
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  // ggml_init fills the f16 conversion table the decoders read.
  struct ggml_init_params params = {0, NULL, true};
  struct ggml_context* context = ggml_init(params);
  FILE* f = fopen(argv[1], "wb");
  if (!f) return 1;
  const uint32_t version = 1;
  fwrite("EKQV", 1, 4, f);
  fwrite(&version, 4, 1, f);
  const enum ggml_type types[3] = {GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K};
  for (int kind = 0; kind < 3; ++kind) {
    const int block_bytes = (int)ggml_type_size(types[kind]);
    const uint32_t blocks = 4, rows = 4, cols = 512;
    uint8_t* raw = malloc(blocks * block_bytes);
    float* values = malloc(blocks * 256 * sizeof(float));
    Blocks(kind, raw, blocks, block_bytes);
    ggml_get_type_traits(types[kind])->to_float(raw, values, blocks * 256);
    fwrite(&blocks, 4, 1, f);
    fwrite(values, sizeof(float), blocks * 256, f);
    float* m = malloc(rows * cols * sizeof(float));
    const size_t row_bytes = ggml_row_size(types[kind], cols);
    uint8_t* q = malloc(rows * row_bytes);
    Matrix(kind, m, rows, cols);
    ggml_quantize_chunk(types[kind], m, q, 0, rows, cols, NULL);
    fwrite(&rows, 4, 1, f);
    fwrite(&cols, 4, 1, f);
    fwrite(q, 1, rows * row_bytes, f);
    free(raw), free(values), free(m), free(q);
  }
  fclose(f);
  ggml_free(context);
  return 0;
}
