// The fixture of the C API tests on stories260K (c_api_stories_test.cc,
// c_api_grammar_arena_test.cc, c_api_json_schema_test.cc): the model opened through the
// C++ wrapper; skipped when the model is missing.
#ifndef EMBER_TESTS_C_API_STORIES_H_
#define EMBER_TESTS_C_API_STORIES_H_

#include "ember/ember.hpp"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "tests/stories260k.h"

namespace ember {

class CApiStoriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) GTEST_SKIP();
    ASSERT_EQ(model_.Open(testing::Stories260KPath().c_str()), EMBER_OK)
        << cpp::LastError();
  }
  cpp::Model model_;
};

}  // namespace ember

#endif  // EMBER_TESTS_C_API_STORIES_H_
