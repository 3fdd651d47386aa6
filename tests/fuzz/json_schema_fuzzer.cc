// Fuzzes the JSON Schema to GBNF converter (tools/grammar/json_schema.h): a schema is
// hostile input (an app's, a user's file). It converts to a grammar the GBNF compiler
// accepts (the converter never writes one it refuses) and the program Bind accepts, or
// fails with a message; never a crash, unbounded memory or time.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/grammar/gbnf.h"
#include "runtime/grammar/grammar_program.h"
#include "tools/grammar/json_schema.h"

namespace {

void Check(bool ok, const char* what, const std::string& detail) {
  if (!ok) {
    fprintf(stderr, "json_schema_fuzzer: %s: %s\n", what, detail.c_str());
    abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // schemas are small; large ones only slow the search
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string gbnf;
  const ember::Status converted = ember::tools::JsonSchemaTextToGbnf(text, "schema", &gbnf);
  if (!converted.ok()) {
    Check(converted.message()[0] != '\0', "a refusal without a message", text);
    return 0;
  }
  std::vector<uint32_t> words;
  const ember::Status compiled = ember::grammar::CompileGbnf(gbnf, "root", &words);
  // A schema may ask for more than a grammar holds (a compiler's limit): that is a
  // refusal with a message, not a malformed grammar.
  if (!compiled.ok()) {
    Check(compiled.code() == ember::StatusCode::kResourceExhausted,
          "the converter wrote a grammar the compiler refuses", std::string(compiled.message()) + "\n" + gbnf);
    return 0;
  }
  ember::grammar::Program program;
  Check(program.Bind(words.data(), words.size()).ok(), "Bind refuses a compiled program",
        gbnf);
  return 0;
}
