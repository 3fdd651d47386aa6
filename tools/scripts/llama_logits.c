// Prints llama.cpp's next-token logits of a token sequence, to measure how far its own
// quantizations land from its f32 model (the figures tests/kquant_accuracy_test.cc holds
// ember's K-quants to). Not part of the build; needs a llama.cpp build:
//   L=$LLAMA; B=$L/build-native/bin; gcc -O2 -I$L/include -I$L/ggml/include -o /tmp/logits
//     tools/scripts/llama_logits.c -L$B -lllama -lggml -lggml-base -Wl,-rpath,$B
//   /tmp/logits MODEL.gguf IDS.txt OUT.f32
// IDS.txt: whitespace-separated token ids; OUT.f32: positions x vocabulary float32 (one
// prefill of the whole sequence, one thread, f32 KV cache, every position's logits).
#include <stdio.h>
#include <stdlib.h>

#include "llama.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s MODEL.gguf IDS.txt OUT.f32\n", argv[0]);
    return 2;
  }
  FILE* in = fopen(argv[2], "r");
  if (!in) return 1;
  int ids[4096], n = 0;
  while (n < 4096 && fscanf(in, "%d", &ids[n]) == 1) ++n;
  fclose(in);
  llama_backend_init();
  struct llama_model* model =
      llama_model_load_from_file(argv[1], llama_model_default_params());
  if (!model) return 1;
  struct llama_context_params params = llama_context_default_params();
  params.n_ctx = params.n_batch = params.n_ubatch = (uint32_t)n;
  params.n_threads = params.n_threads_batch = 1;
  params.type_k = params.type_v = GGML_TYPE_F32;  // the cache adds no rounding of its own
  struct llama_context* ctx = llama_init_from_model(model, params);
  if (!ctx) return 1;
  struct llama_batch batch = llama_batch_init(n, 0, 1);
  for (int i = 0; i < n; ++i) {
    batch.token[i] = ids[i];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = 1;
  }
  batch.n_tokens = n;
  if (llama_decode(ctx, batch) != 0) return 1;
  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  FILE* out = fopen(argv[3], "wb");
  if (!out) return 1;
  for (int i = 0; i < n; ++i) fwrite(llama_get_logits_ith(ctx, i), sizeof(float), vocab, out);
  fclose(out);
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
