// The order a model file's tensor segments are written in: the order one forward pass
// reads them, so decode streams the file front to back (the embeddings looked up per
// token, each layer's tensors in the order of its steps, the final norm, the classifier).
#ifndef EMBER_RUNTIME_MODEL_SEGMENT_ORDER_H_
#define EMBER_RUNTIME_MODEL_SEGMENT_ORDER_H_

#include <cstddef>
#include <vector>

#include "runtime/model/model_writer.h"

namespace ember {

// Indices of spec.tensors in the order their segments are written; ties keep the
// importer's order.
std::vector<size_t> SegmentOrder(const ModelSpec& spec);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_SEGMENT_ORDER_H_
