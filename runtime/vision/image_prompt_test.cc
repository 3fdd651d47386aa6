#include "runtime/vision/image_prompt.h"

#include <string>

#include "gtest/gtest.h"

namespace ember {
namespace {

ImagePrompt Gemma3() {
  ImagePrompt p;
  p.marker = "<start_of_image>";
  p.before = "\n\n<start_of_image>";
  p.after = "<end_of_image>\n\n";
  p.token = "<image_soft_token>";
  return p;
}

std::string Expand(const ImagePrompt& p, const std::string& text,
                   std::initializer_list<size_t> rows) {
  std::string out(4096, '\0');
  size_t length = 0;
  const Status s = ExpandImagePrompt(p, text, rows.begin(), rows.size(), out.data(),
                                     out.size(), &length);
  EXPECT_TRUE(s.ok()) << s.message();
  out.resize(length);
  return out;
}

// Written by hand from transformers' Gemma3Processor: full_image_sequence is
// "\n\n" + boi + image_token * mm_tokens_per_image + eoi + "\n\n", put in place of each
// boi in the text.
TEST(ImagePromptTest, ExpandsAsGemma3Processor) {
  const ImagePrompt p = Gemma3();
  EXPECT_EQ(Expand(p, "<start_of_turn>user\n<start_of_image>What is it?", {3}),
            "<start_of_turn>user\n\n\n<start_of_image><image_soft_token>"
            "<image_soft_token><image_soft_token><end_of_image>\n\nWhat is it?");
  EXPECT_EQ(Expand(p, "<start_of_image><start_of_image>", {1, 2}),
            "\n\n<start_of_image><image_soft_token><end_of_image>\n\n"
            "\n\n<start_of_image><image_soft_token><image_soft_token><end_of_image>\n\n");
  EXPECT_EQ(Expand(p, "no image", {}), "no image");
  EXPECT_EQ(CountImageMarkers(p, "<start_of_image>x<start_of_image"), 1u);
  auto bytes =
      ExpandedImagePromptBytes(p, "a<start_of_image>b", (const size_t[]){256}, 1);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 2 + p.before.size() + p.after.size() + 256 * p.token.size());
}

// kFirst: a text with no marker takes the images at its start; with markers, they
// must agree as before.
TEST(ImagePromptTest, UnmarkedImagesCanComeFirst) {
  const ImagePrompt p = Gemma3();
  const size_t rows[2] = {1, 2};
  std::string out(512, '\0');
  size_t length = 0;
  ASSERT_TRUE(ExpandImagePrompt(p, "Describe.", rows, 2, out.data(), out.size(), &length,
                                UnmarkedImages::kFirst)
                  .ok());
  EXPECT_EQ(out.substr(0, length),
            "\n\n<start_of_image><image_soft_token><end_of_image>\n\n"
            "\n\n<start_of_image><image_soft_token><image_soft_token><end_of_image>\n\n"
            "Describe.");
  auto bytes = ExpandedImagePromptBytes(p, "Describe.", rows, 2, UnmarkedImages::kFirst);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, length);
  EXPECT_EQ(
      ExpandImagePrompt(p, "Describe.", rows, 2, out.data(), out.size(), &length).code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(ExpandImagePrompt(p, "<start_of_image>", rows, 2, out.data(), out.size(),
                              &length, UnmarkedImages::kFirst)
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(ImagePromptTest, RefusesCountsThatDisagree) {
  const ImagePrompt p = Gemma3();
  const size_t rows[2] = {4, 4};
  char out[512];
  size_t length = 0;
  EXPECT_EQ(
      ExpandImagePrompt(p, "one <start_of_image>", rows, 2, out, sizeof(out), &length)
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(ExpandImagePrompt(p, "none", rows, 1, out, sizeof(out), &length).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ExpandImagePrompt(p, "<start_of_image>", rows, 1, out, 8, &length).code(),
            StatusCode::kOutOfRange);
  const size_t huge[1] = {SIZE_MAX / 4};
  EXPECT_EQ(ExpandedImagePromptBytes(p, "<start_of_image>", huge, 1).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(ExpandedImagePromptBytes(ImagePrompt(), "<start_of_image>", rows, 1)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ember
