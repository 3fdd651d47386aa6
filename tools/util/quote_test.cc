// QuotePiece and Printable: every control character a terminal obeys (C0, DEL, the C1
// range in UTF-8) and every byte that is not valid UTF-8 comes out escaped; the rest of
// the text stays as it was.
#include "tools/util/quote.h"

#include <string>

#include "gtest/gtest.h"

namespace ember::tools {
namespace {

TEST(QuoteTest, PrintableEscapesWhatATerminalObeys) {
  EXPECT_EQ(Printable("GGUF llama (TinyStories 260K)"), "GGUF llama (TinyStories 260K)");
  EXPECT_EQ(Printable("caf\xC3\xA9 \xE2\x9C\x93 \\ \""),
            "caf\xC3\xA9 \xE2\x9C\x93 \\ \"");
  EXPECT_EQ(Printable("\x1B[31mred\x1B]0;title\x07"), "\\x1B[31mred\\x1B]0;title\\x07");
  EXPECT_EQ(Printable("a\nb\rc\td\x7F"), "a\\nb\\rc\\td\\x7F");
  EXPECT_EQ(Printable("\xC2\x9B"
                      "2J \xC2\x80 \xC2\xA0"),
            "\\u009B2J \\u0080 \xC2\xA0");
  EXPECT_EQ(Printable("\xFF\xC3"), "\\xFF\\xC3");  // not UTF-8, and half a character
  EXPECT_EQ(Printable(std::string("a\0b", 3)), "a\\x00b");
}

TEST(QuoteTest, QuotePieceIsALiteral) {
  EXPECT_EQ(QuotePiece("\xE2\x96\x81the"), "\"\xE2\x96\x81the\"");
  EXPECT_EQ(QuotePiece("\\\"\n\x1B"), "\"\\\\\\\"\\n\\x1B\"");
  EXPECT_EQ(QuotePiece("\xC2\x9B"), "\"\\u009B\"");
  EXPECT_EQ(QuotePiece("<0x0A>"), "\"<0x0A>\"");
}

}  // namespace
}  // namespace ember::tools
