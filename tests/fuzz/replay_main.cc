// Replays inputs through a fuzz harness without libFuzzer: `<name>_fuzz_replay PATH...`
// runs LLVMFuzzerTestOneInput on each file (a directory: each file in it, sorted). CTest
// uses it in every build to replay the checked-in crash regressions and the seeds.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool ReadAll(const std::string& path, std::vector<uint8_t>* out) {
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return false;
  out->clear();
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out->insert(out->end(), buf, buf + n);
  const bool ok = !ferror(f);
  fclose(f);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: cannot stat %s\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      files.push_back(argv[i]);
      continue;
    }
    std::vector<std::string> in_dir;
    if (DIR* d = opendir(argv[i])) {
      while (dirent* e = readdir(d)) {
        const std::string path = std::string(argv[i]) + "/" + e->d_name;
        if (e->d_name[0] != '.' && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
          in_dir.push_back(path);
        }
      }
      closedir(d);
    }
    std::sort(in_dir.begin(), in_dir.end());
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  if (files.empty()) {
    fprintf(stderr, "replay: no inputs\n");
    return 1;
  }
  std::vector<uint8_t> bytes;
  for (const std::string& path : files) {
    if (!ReadAll(path, &bytes)) {
      fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 1;
    }
    fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  printf("replayed %zu inputs\n", files.size());
  return 0;
}
