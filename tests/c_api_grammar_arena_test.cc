// The C API's grammars in the session's arena (ember_session_options.grammar_bytes,
// ember_grammar_bytes) on stories260K: a grammar is refused by a session planned with
// less than it needs, naming the bytes, and the one set before stays.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "tests/c_api_stories.h"
#include "tests/stories260k.h"

namespace ember {
namespace {

using CApiGrammarArenaTest = CApiStoriesTest;  // stories260K, tests/c_api_stories.h

// The grammar's memory is the session's arena: ember_grammar_bytes tells what one needs,
// a session planned with less refuses it naming the bytes (and keeps the grammar it
// had), one planned with exactly that much takes it, and EMBER_NO_GRAMMAR plans none.
TEST_F(CApiGrammarArenaTest, TheGrammarLivesInTheSessionsArena) {
  const char kJson[] =
      "root ::= \"{\" ws ( str ws \":\" ws str ws )? \"}\"\n"
      "str ::= \"\\\"\" [a-z ]{0,8} \"\\\"\"\nws ::= [ ]?";
  size_t need = 0;
  ASSERT_EQ(ember_grammar_bytes(model_.get(), kJson, strlen(kJson), nullptr, &need),
            EMBER_OK)
      << cpp::LastError();
  EXPECT_GT(need, 0u);
  ember_session_options options;
  ember_session_options_default(&options);
  EXPECT_EQ(options.grammar_bytes, 0u);  // the default room
  ember_session_options none = options;
  none.grammar_bytes = EMBER_NO_GRAMMAR;
  ember_session_options exact = options;
  exact.grammar_bytes = need;
  EXPECT_GE(model_.ArenaBytes(&exact), model_.ArenaBytes(&none) + need);
  {
    cpp::Session session;
    ASSERT_EQ(session.Create(model_, &none), EMBER_OK);
    EXPECT_EQ(session.SetGrammar(kJson), EMBER_RESOURCE_EXHAUSTED);
    EXPECT_NE(std::string(cpp::LastError()).find("planned 0"), std::string::npos)
        << cpp::LastError();
  }
  ember_session_options small = options;
  small.grammar_bytes = need - 16;
  cpp::Session session;
  ASSERT_EQ(session.Create(model_, &small), EMBER_OK);
  const char kYes[] = "root ::= \"yes.\"";
  ASSERT_EQ(session.SetGrammar(kYes), EMBER_OK) << cpp::LastError();
  EXPECT_EQ(session.SetGrammar(kJson), EMBER_RESOURCE_EXHAUSTED);
  const std::string message = cpp::LastError();
  EXPECT_NE(message.find("needs " + std::to_string(need) + " bytes"), std::string::npos)
      << message;
  // The grammar set before stays.
  std::vector<int32_t> prompt;
  ASSERT_EQ(session.Tokenize("Once upon a time", true, &prompt), EMBER_OK);
  std::string text;
  ASSERT_EQ(session.Generate(prompt, 20,
                             [&](int32_t, std::string_view piece) {
                               text.append(piece);
                               return true;
                             }),
            EMBER_OK);
  EXPECT_EQ(text, "yes.");
  // Exactly what it needs: it fits, and generation follows it.
  cpp::Session fits;
  ASSERT_EQ(fits.Create(model_, &exact), EMBER_OK);
  ASSERT_EQ(fits.SetGrammar(kJson), EMBER_OK) << cpp::LastError();
  text.clear();
  ASSERT_EQ(fits.Generate(prompt, 60,
                          [&](int32_t, std::string_view piece) {
                            text.append(piece);
                            return true;
                          }),
            EMBER_OK)
      << cpp::LastError();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.front(), '{') << text;
  EXPECT_EQ(text.back(), '}') << text;
}

}  // namespace
}  // namespace ember
