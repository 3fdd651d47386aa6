#include "runtime/vision/image_prompt.h"

#include <string>
#include <vector>

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

ImagePrompt Idefics3() {
  ImagePrompt p;
  p.marker = "<image>";
  p.token = "<image>";
  p.layout = ImagePromptLayout::kTiles;
  p.around = "<fake_token_around_image>";
  p.global_token = "<global-img>";
  return p;
}

std::vector<PromptImage> Images(std::initializer_list<size_t> rows) {
  std::vector<PromptImage> images;
  for (size_t r : rows) images.push_back(PromptImage{r, 0, 0});
  return images;
}

std::string Expand(const ImagePrompt& p, const std::string& text,
                   const std::vector<PromptImage>& images) {
  std::string out(8192, '\0');
  size_t length = 0;
  const Status s = ExpandImagePrompt(p, text, images.data(), images.size(), out.data(),
                                     out.size(), &length);
  EXPECT_TRUE(s.ok()) << s.message();
  out.resize(length);
  auto bytes = ExpandedImagePromptBytes(p, text, images.data(), images.size());
  EXPECT_TRUE(bytes.ok());
  if (bytes.ok()) {
    EXPECT_EQ(*bytes, length);
  }
  return out;
}

std::string Expand(const ImagePrompt& p, const std::string& text,
                   std::initializer_list<size_t> rows) {
  return Expand(p, text, Images(rows));
}

// What transformers' _prompt_split_image / _prompt_single_image (processing_idefics3.py)
// build, spelled out here independently: per tile "<fake_token_around_image>",
// "<row_r_col_c>", seq x "<image>"; "\n" after each row of tiles; "\n", the global view
// framed by <fake_token_around_image> with "<global-img>".
std::string Idefics3Reference(int rows, int cols, int seq) {
  const std::string fake = "<fake_token_around_image>", image = "<image>";
  std::string tokens;
  for (int i = 0; i < seq; ++i) tokens += image;
  std::string text;
  for (int r = 1; r <= rows; ++r) {
    for (int c = 1; c <= cols; ++c) {
      text +=
          fake + "<row_" + std::to_string(r) + "_col_" + std::to_string(c) + ">" + tokens;
    }
    text += "\n";
  }
  if (rows > 0) text += "\n";
  return text + fake + "<global-img>" + tokens + fake;
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
  const PromptImage one[1] = {{256, 0, 0}};
  auto bytes = ExpandedImagePromptBytes(p, "a<start_of_image>b", one, 1);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 2 + p.before.size() + p.after.size() + 256 * p.token.size());
}

// kFirst: a text with no marker takes the images at its start; with markers, they
// must agree as before.
TEST(ImagePromptTest, UnmarkedImagesCanComeFirst) {
  const ImagePrompt p = Gemma3();
  const PromptImage rows[2] = {{1, 0, 0}, {2, 0, 0}};
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
  const PromptImage rows[2] = {{4, 0, 0}, {4, 0, 0}};
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
  const PromptImage huge[1] = {{SIZE_MAX / 4, 0, 0}};
  EXPECT_EQ(ExpandedImagePromptBytes(p, "<start_of_image>", huge, 1).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(ExpandedImagePromptBytes(ImagePrompt(), "<start_of_image>", rows, 1)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

// SmolVLM's tiles: a 2 x 3 grid and the global view, an image that was one tile, and
// two images in one text, each against the reference written out above.
TEST(ImagePromptTest, ExpandsAsIdefics3Processor) {
  const ImagePrompt p = Idefics3();
  const PromptImage split{7 * 2, 2, 3};  // 6 tiles + the global view, 2 rows each
  EXPECT_EQ(Expand(p, "User:<image>What is it?", {split}),
            "User:" + Idefics3Reference(2, 3, 2) + "What is it?");
  EXPECT_EQ(Expand(p, "<image>", {PromptImage{3, 0, 0}}), Idefics3Reference(0, 0, 3));
  const PromptImage wide{3 * 64, 1, 2};
  EXPECT_EQ(Expand(p, "a<image>b<image>c", {PromptImage{64, 0, 0}, wide}),
            "a" + Idefics3Reference(0, 0, 64) + "b" + Idefics3Reference(1, 2, 64) + "c");
  EXPECT_EQ(Idefics3Reference(1, 1, 1),
            "<fake_token_around_image><row_1_col_1><image>\n\n"
            "<fake_token_around_image><global-img><image><fake_token_around_image>");
  // The marker is the token: a text's own "<image>" counts, the expansion's do not.
  EXPECT_EQ(CountImageMarkers(p, "<image><image>"), 2u);
}

TEST(ImagePromptTest, RefusesTilesThatDoNotAddUp) {
  const ImagePrompt p = Idefics3();
  char out[4096];
  size_t length = 0;
  const PromptImage uneven[1] = {{10, 1, 2}};  // 3 tiles
  EXPECT_EQ(ExpandImagePrompt(p, "<image>", uneven, 1, out, sizeof(out), &length).code(),
            StatusCode::kInvalidArgument);
  const PromptImage half[1] = {{6, 0, 2}};
  EXPECT_EQ(ExpandImagePrompt(p, "<image>", half, 1, out, sizeof(out), &length).code(),
            StatusCode::kInvalidArgument);
  const PromptImage negative[1] = {{6, -1, -1}};
  EXPECT_EQ(
      ExpandImagePrompt(p, "<image>", negative, 1, out, sizeof(out), &length).code(),
      StatusCode::kInvalidArgument);
  const PromptImage none[1] = {{0, 0, 0}};
  EXPECT_EQ(ExpandImagePrompt(p, "<image>", none, 1, out, sizeof(out), &length).code(),
            StatusCode::kInvalidArgument);
  const PromptImage huge[1] = {{SIZE_MAX - SIZE_MAX % 3, 1, 2}};
  EXPECT_EQ(ExpandedImagePromptBytes(p, "<image>", huge, 1).status().code(),
            StatusCode::kOutOfRange);
  const PromptImage vast[1] = {{1, 1 << 30, 1 << 30}};
  EXPECT_NE(ExpandedImagePromptBytes(p, "<image>", vast, 1).status().code(),
            StatusCode::kOk);
}

}  // namespace
}  // namespace ember
