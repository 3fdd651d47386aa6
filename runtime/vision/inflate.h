// DEFLATE (RFC 1951) inside a zlib stream (RFC 1950), decoded into caller memory with
// no allocation: the output buffer is the window, so back-references read what was
// written. The compressed bytes may arrive in pieces (a PNG's IDAT chunks), pulled
// through a callback. PNG's only use: its rows are inflated into planned scratch.
#ifndef EMBER_RUNTIME_VISION_INFLATE_H_
#define EMBER_RUNTIME_VISION_INFLATE_H_

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"

namespace ember {

// The next piece of compressed input: true and [*data, *data + *size), or false at the
// end of the stream's bytes.
using InflateSource = bool (*)(void* context, const uint8_t** data, size_t* size);

// Inflates a zlib stream into out[0, out_bytes) and stops when the output is full (what
// follows, including the Adler-32 check, is not read: as Pillow's PNG decoder stops at
// the last row). InvalidArgument for a corrupt stream, or one that ends before the
// output is full.
Status InflateZlib(InflateSource source, void* context, uint8_t* out, size_t out_bytes);

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_INFLATE_H_
