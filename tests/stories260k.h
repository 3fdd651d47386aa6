// stories260K converted to ember's model file once per test binary, with the llama2.c
// importer: the real model the end-to-end tests run (testing/testing.h has the golden
// output it must give).
#ifndef EMBER_TESTS_STORIES260K_H_
#define EMBER_TESTS_STORIES260K_H_

#include <string>

namespace ember::testing {

// Path of stories260K converted to .ember (f32), made once per process in the temp dir
// (removed at exit). A failure, and an empty path, if the conversion fails.
std::string Stories260KPath();

}  // namespace ember::testing

#endif  // EMBER_TESTS_STORIES260K_H_
