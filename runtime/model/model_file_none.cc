// Model::Open in builds without a file system (EMBER_WITH_FILES=OFF, e.g. bare metal):
// models come from memory (Model::FromMemory, ember_model_from_memory), so nothing is
// ever mapped and Open says why it cannot read a path.
#include "runtime/model/model.h"

namespace ember {

Result<std::unique_ptr<Model>> Model::Open(const char* path) {
  return Unimplemented(
      "cannot open '%s': this build has no file system (EMBER_WITH_FILES=OFF); load the "
      "model from memory (ember_model_from_memory)",
      path);
}

Model::~Model() = default;  // never mapped

}  // namespace ember
