// stories260K converted once per test binary (see stories260k.h).
#include "tests/stories260k.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "runtime/model/model_writer.h"
#include "testing/testing.h"
#include "tools/convert/dtype_policy.h"
#include "tools/convert/llama2c/llama2c_import.h"

namespace ember::testing {

std::string Stories260KPath() {
  // Never destroyed: the atexit handler below runs after static destructors would.
  static const std::string& path = *new std::string([] {
    const std::string dir = ModelsDir() + "/llama2c/stories260K/";
    const char* tmp = getenv("TMPDIR");
    const std::string out = std::string(tmp && *tmp ? tmp : "/tmp") +
                            "/ember_stories260K_" + std::to_string(getpid()) + ".ember";
    ModelSpec spec;
    Status s = tools::ImportLlama2c(dir + "stories260K.bin", dir + "tok512.bin", &spec);
    if (s.ok()) s = WriteModel(spec, out);
    if (!s.ok()) {
      ADD_FAILURE() << "converting stories260K: " << s.message();
      return std::string();
    }
    atexit([] { unlink(Stories260KPath().c_str()); });
    return out;
  }());
  return path;
}

LoadedModel Stories260KAs(DType dtype) {
  const std::string dir = ModelsDir() + "/llama2c/stories260K/";
  ModelSpec spec;
  Status s = tools::ImportLlama2c(dir + "stories260K.bin", dir + "tok512.bin", &spec);
  EXPECT_TRUE(s.ok()) << s.message();
  s = tools::ChooseDTypes(dtype, {}, &spec);
  EXPECT_TRUE(s.ok()) << s.message();
  return LoadSpec(spec);
}

}  // namespace ember::testing
