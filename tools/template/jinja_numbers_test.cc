// The chat template machine's numbers against Jinja2's: every operator and builtin
// that takes a number from the template, at the edges of 64-bit integers and floats.
// The expected texts are Jinja2 3.1.6's renders (python3, ImmutableSandboxedEnvironment
// as transformers sets it up), written here once. Where Python answers with an integer
// past 64 bits the machine refuses, naming the operation; where Python raises, so does
// the machine. ASan+UBSan run this too: none of it may be undefined behaviour.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/chat/chat_template.h"
#include "tools/template/chat_program.h"
#include "tools/template/jinja_compiler.h"
#include "tools/template/jinja_parser.h"

namespace ember::tools {
namespace {

// The int64 limits, infinity and nan, as both engines build them (Jinja2 folds a
// constant 'inf' | float into generated Python that names `inf`: hence the list).
constexpr char kPrelude[] =
    "{% set imax = '9223372036854775807' | int %}"
    "{% set imin = '-9223372036854775808' | int %}"
    "{% set words = ['inf', 'nan'] %}{% set inf = words[0] | float %}"
    "{% set nan = words[1] | float %}";

// A render's text (after kPrelude), or "error: <message>".
std::string Render(const std::string& source, size_t buffer_bytes = 1 << 16,
                   const char* prelude = kPrelude) {
  jinja::Body body;
  ChatProgramSpec program;
  Status s = jinja::Parse(prelude + source, &body);
  if (s.ok()) s = jinja::Compile(body, &program);
  if (!s.ok()) return std::string("compile error: ") + s.message();
  ProgramStorage storage;
  ChatTemplate t;
  s = t.Init(TablesOf(program, &storage), 1);
  if (!s.ok()) return std::string("init error: ") + s.message();
  std::vector<char> buffer(buffer_bytes);
  size_t length = 0;
  s = t.Render(nullptr, 0, ChatTemplateOptions(), buffer.data(), buffer.size(), &length);
  if (!s.ok()) return std::string("error: ") + s.message();
  return std::string(buffer.data(), length);
}

struct Case {
  const char* source;
  const char* jinja2;  // Jinja2's text; null where the machine refuses
  const char* error = nullptr;  // then a part of the machine's message
};

void Check(const Case* cases, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const Case& c = cases[i];
    const std::string got = Render(c.source);
    if (c.jinja2) {
      EXPECT_EQ(got, c.jinja2) << c.source;
    } else {
      EXPECT_EQ(got.rfind("error: chat template: ", 0), 0u) << c.source << " -> " << got;
      EXPECT_NE(got.find(c.error), std::string::npos) << c.source << " -> " << got;
    }
  }
}

TEST(JinjaNumbersTest, PowersAreExactOrRefused) {
  const Case cases[] = {
      {"{{ 2 ** 10 }}|{{ 2 ** 62 }}|{{ (-2) ** 63 }}|{{ 7 ** 22 }}|{{ (-3) ** 39 }}",
       "1024|4611686018427387904|-9223372036854775808|3909821048582988049|"
       "-4052555153018976267"},
      {"{{ (-1) ** 65 }}|{{ (-1) ** 64 }}|{{ (-1) ** 2000000001 }}|"
       "{{ 1 ** 2000000000 }}|{{ 0 ** 2000000000 }}",
       "-1|1|-1|1|0"},
      {"{{ 0 ** 0 }}|{{ true ** 5 }}|{{ 2 ** true }}|{{ (-5) ** 3 }}", "1|1|2|-125"},
      {"{{ 2 ** -1 }}|{{ 3 ** -2 }}|{{ (-1) ** -3 }}|{{ (-8) ** -1 }}|{{ 2 ** -1075 }}",
       "0.5|0.1111111111111111|-1.0|-0.125|0.0"},
      {"{{ 2.0 ** 0.5 }}|{{ 4 ** -0.5 }}|{{ 0.0 ** 0 }}|{{ nan ** 0 }}|{{ 1 ** nan }}|"
       "{{ inf ** -1 }}|{{ (-inf) ** 3 }}|{{ 2 ** 1023.0 }}",
       "1.4142135623730951|0.5|1.0|1.0|1.0|0.0|-inf|8.98846567431158e+307"},
      // Jinja2: an integer of 30,103 digits (then ValueError: it will not print it).
      {"{{ 2 ** 100000 }}", nullptr, "2 ** 100000 does not fit a 64-bit integer"},
      // Jinja2: 9223372036854775808, 18446744073709551616, 36472996377170786403.
      {"{{ 2 ** 63 }}", nullptr, "2 ** 63 does not fit a 64-bit integer"},
      {"{{ (-2) ** 64 }}", nullptr, "(-2) ** 64 does not fit a 64-bit integer"},
      {"{{ 3 ** 41 }}", nullptr, "3 ** 41 does not fit"},
      {"{{ 3 ** 2000000000 }}", nullptr, "3 ** 2000000000 does not fit"},
      // Jinja2: ZeroDivisionError: 0.0 cannot be raised to a negative power.
      {"{{ 0 ** -1 }}", nullptr, "zero cannot be raised to a negative power"},
      {"{{ 0.0 ** -1 }}", nullptr, "zero cannot be raised to a negative power"},
      // Jinja2: (1.7319121124709868e-16+2.8284271247461903j), a complex number.
      {"{{ (-8) ** 0.5 }}", nullptr, "(-8) ** 0.5 is a complex number"},
      // Jinja2: OverflowError: (34, 'Numerical result out of range').
      {"{{ 10.0 ** 400 }}", nullptr, "10.0 ** 400 overflows a float"},
  };
  Check(cases, sizeof(cases) / sizeof(cases[0]));
}

TEST(JinjaNumbersTest, IntegerOperatorsAtTheEdgesOf64Bits) {
  const Case cases[] = {
      {"{{ imax }}|{{ imin }}|{{ imax + imin }}|{{ -imax }}|{{ imax | abs }}|"
       "{{ imin // 1 }}",
       "9223372036854775807|-9223372036854775808|-1|-9223372036854775807|"
       "9223372036854775807|-9223372036854775808"},
      {"{{ imin % -1 }}|{{ imin % imin }}|{{ imin // imin }}|"
       "{{ imin is divisibleby(-1) }}|{{ imin is divisibleby(2) }}|{{ imax is odd }}",
       "0|0|1|True|True|True"},
      {"{{ -7 // 2 }}|{{ -7 % 2 }}|{{ 7 // -2 }}|{{ 7 % -2 }}|{{ imin // 3 }}|"
       "{{ imin % 3 }}",
       "-4|1|-4|-1|-3074457345618258603|1"},
      // Jinja2: 9223372036854775808, -9223372036854775809, 18446744073709551614, and
      // 9223372036854775808 for the last four.
      {"{{ imax + 1 }}", nullptr, "9223372036854775807 + 1 does not fit"},
      {"{{ imin - 1 }}", nullptr, "(-9223372036854775808) - 1 does not fit"},
      {"{{ imax * 2 }}", nullptr, "9223372036854775807 * 2 does not fit"},
      {"{{ imin * -1 }}", nullptr, "(-9223372036854775808) * (-1) does not fit"},
      {"{{ imin // -1 }}", nullptr, "(-9223372036854775808) // (-1) does not fit"},
      {"{{ -imin }}", nullptr, "-(-9223372036854775808) does not fit"},
      {"{{ imin | abs }}", nullptr, "abs(-9223372036854775808) does not fit"},
      // Jinja2: ZeroDivisionError.
      {"{{ 7 // 0 }}", nullptr, "division by zero"},
      {"{{ 7 % 0.0 }}", nullptr, "division by zero"},
      {"{{ 7.5 % inf }}|{{ -7.5 % inf }}|{{ 7.5 // inf }}|{{ -7.5 // inf }}|"
       "{{ 5.0 % -3 }}|{{ -5.0 // 3 }}|{{ -0.0 % 5 }}|{{ 1e308 * 10 }}|{{ inf - inf }}",
       "7.5|inf|0.0|-1.0|-1.0|-2.0|0.0|inf|nan"},
  };
  Check(cases, sizeof(cases) / sizeof(cases[0]));
}

TEST(JinjaNumbersTest, IntAndFloatFiltersReadWhatPythonReads) {
  const Case cases[] = {
      {"{{ nan | int }}|{{ nan | int(7) }}|{{ 1e18 | int }}|{{ 9.2e18 | int }}|"
       "{{ -9.2e18 | int }}|{{ (-2.7) | int }}|{{ 2.7 | int }}",
       "0|7|1000000000000000000|9200000000000000000|-9200000000000000000|-2|2"},
      {"{{ 'nan' | int }}|{{ 'inf' | int }}|{{ ' 12 ' | int }}|{{ '1_000' | int }}|"
       "{{ '0x10' | int }}|{{ '9007199254740993' | int }}|{{ '1e3' | int }}",
       "0|0|12|1000|0|9007199254740993|1000"},
      {"{{ '+5' | int }}|{{ '' | int }}|{{ 'x' | int(7) }}|{{ '12abc' | int }}|"
       "{{ '1.5' | int }}|{{ '1__0' | int }}|{{ '_1' | int }}|{{ none | int }}|"
       "{{ true | int }}|{{ '-0' | int }}",
       "5|0|7|0|1|0|0|0|1|0"},
      // Jinja2: OverflowError: cannot convert float infinity to integer.
      {"{{ inf | int }}", nullptr, "int of inf"},
      {"{{ (-inf) | int }}", nullptr, "int of -inf"},
      // Jinja2: 1000000000000000052504760255204420248704468581108159154915854115111802...
      // and 9300000000000000000, 9223372036854775808, and the first again.
      {"{{ 1e300 | int }}", nullptr, "int of 1e+300 does not fit a 64-bit integer"},
      {"{{ 9.3e18 | int }}", nullptr, "int of 9.3e+18 does not fit"},
      {"{{ '9223372036854775808' | int }}", nullptr,
       "int of '9223372036854775808' does not fit"},
      {"{{ '1e300' | int }}", nullptr, "int of 1e+300 does not fit"},
      {"{{ '0x1p3' | float }}|{{ 'nan' | float }}|{{ 'Infinity' | float }}|"
       "{{ '-INF' | float }}|{{ 'nan(1)' | float }}|{{ '1e999' | float }}|"
       "{{ '1_0.5' | float }}",
       "0.0|nan|inf|-inf|0.0|inf|10.5"},
      {"{{ '.5' | float }}|{{ '5.' | float }}|{{ '1e' | float }}|{{ ' 2.5 ' | float }}|"
       "{{ imax | float }}|{{ 'x' | float(1) }}|{{ '1._5' | float }}",
       "0.5|5.0|0.0|2.5|9.223372036854776e+18|1|0.0"},
  };
  Check(cases, sizeof(cases) / sizeof(cases[0]));
}

TEST(JinjaNumbersTest, RepetitionSlicesIndexesAndRangesAtTheEdges) {
  const Case cases[] = {
      {"[{{ 'ab' * -3 }}|{{ -3 * 'ab' }}|{{ '' * imax }}|{{ 'ab' * 3 }}]", "[|||ababab]"},
      {"{{ 'abcdef'[::imax] }}|{{ 'abcdef'[::imin] }}|{{ 'abcdef'[imin:imax] }}|"
       "{{ [1, 2, 3][::imin] }}|{{ [1, 2, 3][::imax] }}|[{{ 'abc'[-10::-1] }}]",
       "a|f|abcdef|[3]|[1]|[]"},
      {"{{ [1, 2, 3, 4, 5, 6][::-2][::imax] }}|{{ [1, 2, 3, 4, 5, 6][::-2][::-1] }}|"
       "[{{ [1, 2, 3][imin] }}|{{ 'abc'[imin] }}|{{ [1, 2, 3][imax] }}]",
       "[6]|[2, 4, 6]|[||]"},
      // Jinja2: ValueError: slice step cannot be zero.
      {"{{ 'abc'[::0] }}", nullptr, "slice step cannot be zero"},
      {"{{ range(imin, imax, 2 ** 62) | list }}",
       "[-9223372036854775808, -4611686018427387904, 0, 4611686018427387904]"},
      {"{{ range(imax, imin, -(2 ** 62)) | list }}",
       "[9223372036854775807, 4611686018427387903, -1, -4611686018427387905]"},
      {"{{ range(imin, imin + 3) | list }}",
       "[-9223372036854775808, -9223372036854775807, -9223372036854775806]"},
      // Jinja2: OverflowError: Python int too large to convert to C ssize_t.
      {"{{ range(imin, imax) | length }}", nullptr,
       "range of 18446744073709551615 items"},
      {"{{ [1, 2] | tojson(indent=-1) }}|{{ [1, [2]] | tojson(indent=true) }}|"
       "{{ [1] | tojson(indent=0) }}|{{ 5 | tojson(indent=2000000000) }}",
       "[\n1,\n2\n]|[\n 1,\n [\n  2\n ]\n]|[\n1\n]|5"},
  };
  Check(cases, sizeof(cases) / sizeof(cases[0]));
}

// An indent of two billion spaces fills the buffer at once: an error, not a loop over
// them (Jinja2 would build the 2 GB string).
TEST(JinjaNumbersTest, AHugeJsonIndentFillsTheBufferQuickly) {
  const std::string got = Render("{{ [1] | tojson(indent=2000000000) }}", 4096);
  EXPECT_NE(got.find("is too small"), std::string::npos) << got;
}

// A template whose only strings are empty has no string bytes at all: a program the
// loader takes (it refused one as "constants missing"), and '' repeated two billion
// times is '' at once.
TEST(JinjaNumbersTest, EmptyStringsRepeatedAreEmptyAtOnce) {
  EXPECT_EQ(Render("{{ '' * 2000000000 }}", 4096, ""), "");
}

}  // namespace
}  // namespace ember::tools
