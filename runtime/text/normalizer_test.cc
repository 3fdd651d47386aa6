// NFC against the Unicode Consortium's own conformance test (NormalizationTest.txt from
// Debian's unicode-data, decompressed at build time): every line's NFC columns, and every
// code point Part 1 does not list unchanged; the quick check never says yes wrongly; the
// work buffer is exactly enough for the worst cases; long runs of marks stay fast.
#include "runtime/text/normalizer.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/testing.h"

namespace ember {
namespace {

using testing::Utf8;

// NFC through ToNfc with exactly NfcWorkBytes of memory and a canary after it; also
// checks that the quick check's "yes" is right.
std::string Nfc(const std::string& text) {
  std::vector<char> work(NfcWorkBytes(text.size()) + 4, '\x5A');
  const size_t n = ToNfc(text, work.data());
  EXPECT_LE(n, kNfcMaxGrowth * text.size());
  for (size_t i = work.size() - 4; i < work.size(); ++i) {
    EXPECT_EQ(work[i], '\x5A') << "wrote past NfcWorkBytes";
  }
  const std::string out(work.data(), n);
  if (IsNfcQuick(text)) {
    EXPECT_EQ(out, text) << "the quick check said yes wrongly";
  }
  return out;
}

// "0044 0307" -> UTF-8.
std::string Column(const std::string& hex) {
  std::istringstream in(hex);
  std::string out;
  for (std::string cp; in >> cp;)
    out += Utf8(static_cast<uint32_t>(std::stoul(cp, nullptr, 16)));
  return out;
}

TEST(NfcTest, NormalizationTestTxt) {
  std::ifstream in(EMBER_NORMALIZATION_TEST);
  ASSERT_TRUE(in) << EMBER_NORMALIZATION_TEST;
  std::vector<bool> in_part1(0x110000, false);
  size_t lines = 0, failures = 0;
  int part = -1;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("@Part", 0) == 0) {
      part = line[5] - '0';
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> c;
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ';') && c.size() < 5;)
      c.push_back(Column(f));
    ASSERT_EQ(c.size(), 5u) << line;
    if (part == 1) in_part1[std::stoul(line, nullptr, 16)] = true;
    ++lines;
    // c2 == toNFC(c1) == toNFC(c2) == toNFC(c3); c4 == toNFC(c4) == toNFC(c5).
    const bool ok = Nfc(c[0]) == c[1] && Nfc(c[1]) == c[1] && Nfc(c[2]) == c[1] &&
                    Nfc(c[3]) == c[3] && Nfc(c[4]) == c[3];
    if (!ok && ++failures <= 10) ADD_FAILURE() << "line: " << line;
  }
  EXPECT_GT(lines, 19000u);
  EXPECT_EQ(failures, 0u);
  // Every code point Part 1 leaves out is its own NFC.
  size_t unchanged = 0;
  for (uint32_t cp = 0; cp < 0x110000; ++cp) {
    if (in_part1[cp] || (cp >= 0xD800 && cp <= 0xDFFF)) continue;
    const std::string s = Utf8(cp);
    std::vector<char> work(NfcWorkBytes(s.size()));
    if (std::string(work.data(), ToNfc(s, work.data())) != s) {
      ADD_FAILURE() << "U+" << std::hex << cp << " changed";
      break;
    }
    ++unchanged;
  }
  EXPECT_GT(unchanged, 1000000u);
  printf("%zu lines of NormalizationTest.txt, %zu code points unchanged\n", lines,
         unchanged);
}

TEST(NfcTest, QuickCheck) {
  EXPECT_TRUE(IsNfcQuick(""));
  EXPECT_TRUE(IsNfcQuick("plain ASCII\n"));
  EXPECT_TRUE(IsNfcQuick("caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsNfcQuick("cafe\xCC\x81"));       // a mark that may compose
  EXPECT_FALSE(IsNfcQuick("\xE2\x84\xAB"));       // Angstrom sign: never in NFC
  EXPECT_FALSE(IsNfcQuick("x\xCC\x82\xCC\xA3"));  // marks out of canonical order
  EXPECT_EQ(Nfc("x\xCC\x82\xCC\xA3"), "x\xCC\xA3\xCC\x82");
  EXPECT_EQ(Nfc("cafe\xCC\x81!"), "caf\xC3\xA9!");
}

// The worst cases of the work buffer: the largest growth (U+1D160: 4 bytes, 12 after),
// many code points per byte decomposed (U+0390: 3 from 2 bytes), Hangul syllables
// after jamo, and a long run of marks in reverse canonical order (the merge sort).
TEST(NfcTest, WorstCasesFitTheWorkBuffer) {
  std::string grow, dense, hangul, marks;
  for (int i = 0; i < 1000; ++i) {
    grow += "\xF0\x9D\x85\xA0";
    dense += "\xCE\x90\xCC\xA3";  // the dot below sends it through decomposition
    hangul += "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8\xEA\xB0\x80";  // L V T, then LV
  }
  marks = "a";
  for (int i = 0; i < 100000; ++i) marks += i % 2 ? "\xCC\x81" : "\xCC\xA3";  // 230, 220
  EXPECT_EQ(Nfc(grow).size(), 3 * grow.size());
  EXPECT_EQ(Nfc(dense), dense);  // U+0390 U+0323 is NFC: iota, marks reordered, composed
  EXPECT_EQ(Nfc(hangul).size(), hangul.size() / 2);
  const std::string sorted = Nfc(marks);
  // a + dot below composes (U+1EA1), then the 49999 other dots below, then the acutes.
  std::string want = "\xE1\xBA\xA1";
  for (int i = 1; i < 50000; ++i) want += "\xCC\xA3";
  for (int i = 0; i < 50000; ++i) want += "\xCC\x81";
  EXPECT_EQ(sorted, want);
}

}  // namespace
}  // namespace ember
