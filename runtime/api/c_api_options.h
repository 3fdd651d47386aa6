// The C API's option structs (ember.h) as the runtime's options: each struct_size
// checked, fields past an older caller's struct_size left at their defaults.
#ifndef EMBER_RUNTIME_C_API_OPTIONS_H_
#define EMBER_RUNTIME_C_API_OPTIONS_H_

#include "runtime/ember.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/status.h"
#include "runtime/chat/stop_strings.h"
#include "runtime/text/tokenizer.h"
#include "runtime/pool/thread_pool.h"

namespace ember::c_api {

// o may be null: the defaults.
Status ToSessionOptions(const ember_session_options* o, SessionOptions* options);
// What ToSessionOptions cannot check without the model: attention capture counts
// positions from 0, so a session that starts after a baked prompt cannot record.
Status CheckAttentionCapture(const Model& model, const SessionOptions& options);
// The stop strings go to *stop (copied).
Status ToSamplerOptions(const ember_sampler_options* o, SamplerOptions* options,
                        StopStrings* stop);
Status ToThreadPoolOptions(const ember_threadpool_options* o, int* num_threads,
                           ThreadPoolOptions* options);
// o may be null: the tokenizer's own BOS rule.
Status ToEncodeOptions(const ember_tokenize_options* o, const Tokenizer& tok,
                       EncodeOptions* options);

}  // namespace ember::c_api

#endif  // EMBER_RUNTIME_C_API_OPTIONS_H_
