// Reading the model file's Config fields of current families (RoPE scaling and its
// frequency factors, sliding layers, qk-norm, post-norms, scales, soft-caps) into
// ModelConfig, with the loader's checks and messages.
#ifndef EMBER_RUNTIME_MODEL_FAMILY_CONFIG_H_
#define EMBER_RUNTIME_MODEL_FAMILY_CONFIG_H_

#include "model_generated.h"
#include "runtime/model/config.h"
#include "runtime/status.h"

namespace ember {

// Reads those fields of `fc` into *c, whose other fields (n_layers, head_dim, positions,
// mask, norm) the loader has read and checked. A field out of range, a kind this build
// does not know or a combination the forward pass cannot run is an InvalidModel error
// naming it.
Status ReadFamilyConfig(const fb::Config& fc, ModelConfig* c);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_FAMILY_CONFIG_H_
