// SHA-256: FIPS 180-2's example digests, and coreutils' sha256sum (an implementation
// nobody here wrote) on random files of sizes around the 64-byte block and its padding,
// hashed whole and streamed in odd pieces.
#include "tools/util/sha256.h"

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/testing.h"

namespace ember::tools {
namespace {

TEST(Sha256Test, FipsExamples) {
  EXPECT_EQ(Sha256Hex("", 0),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc", 3),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks =
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(Sha256Hex(two_blocks.data(), two_blocks.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;
  const std::string a(1000, 'a');
  for (int i = 0; i < 1000; ++i) million.Update(a.data(), a.size());
  EXPECT_EQ(million.HexDigest(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

std::string Sha256Sum(const std::string& path) {
  FILE* pipe = popen(("sha256sum '" + path + "'").c_str(), "r");
  if (!pipe) return "";
  char line[128] = {0};
  const bool read = fgets(line, sizeof(line), pipe) != nullptr;
  pclose(pipe);
  return read ? std::string(line, 64) : "";
}

TEST(Sha256Test, AgreesWithSha256sum) {
  testing::ScratchDir dir("ember_sha256_");
  std::mt19937 rng(7);
  for (size_t size :
       {size_t{1}, size_t{55}, size_t{56}, size_t{63}, size_t{64}, size_t{65},
        size_t{119}, size_t{120}, size_t{1000}, size_t{1} << 20}) {
    std::vector<uint8_t> bytes(size);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    const std::string path = dir.path() + "/data" + std::to_string(size);
    FILE* f = fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(fwrite(bytes.data(), 1, size, f), size);
    fclose(f);
    const std::string want = Sha256Sum(path);
    ASSERT_EQ(want.size(), 64u) << "sha256sum failed on " << path;
    EXPECT_EQ(Sha256Hex(bytes.data(), size), want) << size << " bytes";
    // Streamed in pieces of 1, 7, 63, 64, 65 ... bytes: the same digest.
    Sha256 streamed;
    size_t done = 0, piece = 1;
    while (done < size) {
      const size_t n = std::min(piece, size - done);
      streamed.Update(bytes.data() + done, n);
      done += n;
      piece = piece * 7 % 131 + 1;
    }
    EXPECT_EQ(streamed.HexDigest(), want) << size << " bytes, streamed";
  }
}

}  // namespace
}  // namespace ember::tools
