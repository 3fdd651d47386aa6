// stories260K converted to ember's model file once per test binary, with the llama2.c
// importer: the real model the end-to-end tests run (testing/testing.h has the golden
// output it must give).
#ifndef EMBER_TESTS_STORIES260K_H_
#define EMBER_TESTS_STORIES260K_H_

#include <string>

#include "runtime/model/config.h"
#include "testing/testing.h"

namespace ember::testing {

// Path of stories260K converted to .ember (f32), made once per process in the temp dir
// (removed at exit). A failure, and an empty path, if the conversion fails.
std::string Stories260KPath();

// stories260K converted in memory with every matrix as `dtype` (the converter's
// defaults: norms f32; with q4 the tied embedding/classifier is q8).
LoadedModel Stories260KAs(DType dtype);

}  // namespace ember::testing

#endif  // EMBER_TESTS_STORIES260K_H_
