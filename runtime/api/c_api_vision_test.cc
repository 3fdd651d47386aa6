// The C API's images (ember_vision.h) on a vision model built in memory: the rows equal
// the runtime's ImageEncoder's, the expanded prompt's tokens take them in a session
// with the logits of Session::PrefillEmbedded, generation goes on, and every refusal.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/ember.h"
#include "runtime/session.h"
#include "runtime/vision/image_decode_test_data.h"
#include "runtime/vision/image_encoder.h"
#include "testing/testing.h"

namespace ember {
namespace {

class CApiVisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = testing::VisionPromptModelSpec();
    std::vector<uint8_t> raw;
    ASSERT_TRUE(SerializeModel(spec_, &raw).ok());
    bytes_ = testing::AlignedBytes(raw);
    ASSERT_EQ(ember_model_from_memory(bytes_.data(), bytes_.size(), &model_), EMBER_OK)
        << ember_last_error();
    ember_vision_options_default(&options_);
    options_.max_images = 2;
    options_.max_width = options_.max_height = 64;
    options_.max_pixels = 64 * 64;
  }
  void TearDown() override {
    ember_image_encoder_free(encoder_);
    ember_session_free(session_);
    ember_model_free(model_);
  }

  ModelSpec spec_;
  testing::AlignedBytes bytes_;
  ember_model* model_ = nullptr;
  ember_session* session_ = nullptr;
  ember_image_encoder* encoder_ = nullptr;
  ember_vision_options options_;
};

std::vector<uint8_t> Pixels(int width, int height) {
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<uint8_t>((i * 29) % 253);
  return rgb;
}

int Count(void* user, int32_t, const char*, size_t) {
  ++*static_cast<int*>(user);
  return 1;
}

TEST_F(CApiVisionTest, AnImagePromptEndToEnd) {
  EXPECT_EQ(ember_model_has_vision(model_), 1);
  const size_t bytes = ember_image_encoder_bytes(model_, &options_);
  ASSERT_GT(bytes, 0u) << ember_last_error();
  ASSERT_EQ(ember_image_encoder_create(model_, &options_, nullptr, nullptr, 0, &encoder_),
            EMBER_OK)
      << ember_last_error();
  ember_image png;
  ember_image_default(&png);
  png.bytes = kPngRgba;
  png.num_bytes = sizeof(kPngRgba);
  const std::vector<uint8_t> pixels = Pixels(30, 21);
  ember_image rgb;
  ember_image_default(&rgb);
  rgb.rgb = pixels.data();
  rgb.width = 30;
  rgb.height = 21;
  size_t rows = 0;
  ASSERT_EQ(ember_image_encoder_add(encoder_, &png, &rows), EMBER_OK)
      << ember_last_error();
  EXPECT_EQ(rows, 4u);
  ASSERT_EQ(ember_image_encoder_add(encoder_, &rgb, &rows), EMBER_OK)
      << ember_last_error();
  EXPECT_EQ(ember_image_encoder_images(encoder_), 2u);
  size_t n_rows = 0;
  const float* got = ember_image_encoder_rows(encoder_, &n_rows);
  ASSERT_EQ(n_rows, 8u);

  // The runtime's encoder over the same model gives the same rows.
  const testing::LoadedModel m = testing::LoadSpec(spec_);
  ASSERT_TRUE(m.model);
  ImageEncoderOptions o;
  o.max_images = 2;
  o.limits.max_width = o.limits.max_height = 64;
  o.limits.max_pixels = 64 * 64;
  auto plan = PlanImageEncoder(*m.model, o);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->arena_bytes(), bytes);
  std::vector<uint8_t> storage(plan->arena_bytes() + kArenaAlignment);
  uint8_t* base =
      storage.data() +
      (kArenaAlignment - reinterpret_cast<uintptr_t>(storage.data()) % kArenaAlignment) %
          kArenaAlignment;
  auto encoder = ImageEncoder::Create(*m.model, *plan, base, plan->arena_bytes());
  ASSERT_TRUE(encoder.ok());
  ASSERT_TRUE(encoder->AddEncoded(kPngRgba, sizeof(kPngRgba)).ok());
  ASSERT_TRUE(encoder->AddRgb({pixels.data(), 30, 21}).ok());
  const size_t d = m.model->config().d_model;
  EXPECT_EQ(memcmp(got, encoder->rows(), 8 * d * sizeof(float)), 0);

  // The prompt: too small a buffer says what it needs.
  const std::string text = "a<boi>b<boi>";
  size_t needed = 0;
  char small[8];
  EXPECT_EQ(ember_image_prompt_expand(encoder_, text.data(), text.size(), small,
                                      sizeof(small), &needed),
            EMBER_RESOURCE_EXHAUSTED);
  std::vector<char> expanded(needed);
  size_t length = 0;
  ASSERT_EQ(ember_image_prompt_expand(encoder_, text.data(), text.size(), expanded.data(),
                                      expanded.size(), &length),
            EMBER_OK)
      << ember_last_error();
  EXPECT_EQ(std::string(expanded.data(), length),
            "a\n<boi><img><img><img><img><eoi>\nb\n<boi><img><img><img><img><eoi>\n");

  ember_session_options so;
  ember_session_options_default(&so);
  so.max_context = 64;
  ASSERT_EQ(ember_session_create(model_, &so, nullptr, nullptr, 0, &session_), EMBER_OK)
      << ember_last_error();
  ember_tokenize_options to = {sizeof(ember_tokenize_options), -1, 1};
  int32_t ids[64];
  size_t n_ids = 0;
  ASSERT_EQ(ember_tokenize_with_options(session_, expanded.data(), length, &to, ids, 64,
                                        &n_ids),
            EMBER_OK)
      << ember_last_error();
  ASSERT_EQ(ember_prefill_images(session_, encoder_, ids, n_ids), EMBER_OK)
      << ember_last_error();

  SessionOptions options;
  options.max_context = 64;
  auto s = Session::Create(*m.model, options);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->PrefillEmbedded(ids, n_ids, encoder->embedded()).ok());
  EXPECT_EQ(memcmp(ember_logits(session_), s->logits(),
                   m.model->config().vocab_size * sizeof(float)),
            0);
  int generated_calls = 0;
  size_t generated = 0;
  EXPECT_EQ(ember_generate(session_, nullptr, 0, 3, &Count, &generated_calls, &generated),
            EMBER_OK)
      << ember_last_error();
  EXPECT_GT(generated, 0u);

  // A caller's arena works too, and the rows come out the same.
  ember_image_encoder* second = nullptr;
  ASSERT_EQ(ember_image_encoder_create(model_, &options_, nullptr, base, bytes, &second),
            EMBER_OK)
      << ember_last_error();
  ASSERT_EQ(ember_image_encoder_add(second, &png, nullptr), EMBER_OK);
  const float* again = ember_image_encoder_rows(second, &n_rows);
  EXPECT_EQ(n_rows, 4u);
  EXPECT_EQ(memcmp(again, got, 4 * d * sizeof(float)), 0);
  ember_image_encoder_free(second);
  ember_image_encoder_clear(encoder_);
  EXPECT_EQ(ember_image_encoder_images(encoder_), 0u);
  ember_image_encoder_rows(encoder_, &n_rows);
  EXPECT_EQ(n_rows, 0u);
}

TEST_F(CApiVisionTest, Refusals) {
  ASSERT_EQ(ember_image_encoder_create(model_, &options_, nullptr, nullptr, 0, &encoder_),
            EMBER_OK);
  ember_image image;
  ember_image_default(&image);
  EXPECT_EQ(ember_image_encoder_add(encoder_, &image, nullptr), EMBER_INVALID_ARGUMENT);
  const uint8_t garbage[] = {0xff, 0xd8, 0xff, 0x00, 1, 2};
  image.bytes = garbage;
  image.num_bytes = sizeof(garbage);
  EXPECT_EQ(ember_image_encoder_add(encoder_, &image, nullptr), EMBER_INVALID_ARGUMENT);
  const std::vector<uint8_t> big = Pixels(65, 10);
  ember_image_default(&image);
  image.rgb = big.data();
  image.width = 65;
  image.height = 10;
  EXPECT_EQ(ember_image_encoder_add(encoder_, &image, nullptr), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ember_last_error()).find("65x10"), std::string::npos)
      << ember_last_error();
  image.width = 10;
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ember_image_encoder_add(encoder_, &image, nullptr), EMBER_OK);
  }
  EXPECT_EQ(ember_image_encoder_add(encoder_, &image, nullptr), EMBER_OUT_OF_RANGE);
  image.struct_size = 4;
  EXPECT_EQ(ember_image_encoder_add(encoder_, &image, nullptr), EMBER_INVALID_ARGUMENT);

  // Two images, one marker.
  size_t length = 0;
  char out[256];
  EXPECT_EQ(ember_image_prompt_expand(encoder_, "<boi>", 5, out, sizeof(out), &length),
            EMBER_INVALID_ARGUMENT);
  // Bad options; a text-only model.
  ember_vision_options bad = options_;
  bad.max_images = 0;
  EXPECT_EQ(ember_image_encoder_bytes(model_, &bad), 0u);
  bad = options_;
  bad.struct_size = 1000;
  EXPECT_EQ(ember_image_encoder_bytes(model_, &bad), 0u);
  std::vector<uint8_t> raw;
  ASSERT_TRUE(SerializeModel(testing::TinyModelSpec(), &raw).ok());
  const testing::AlignedBytes text_bytes(raw);
  ember_model* text = nullptr;
  ASSERT_EQ(ember_model_from_memory(text_bytes.data(), text_bytes.size(), &text),
            EMBER_OK);
  EXPECT_EQ(ember_model_has_vision(text), 0);
  EXPECT_EQ(ember_image_encoder_bytes(text, nullptr), 0u);
  ember_image_encoder* none = nullptr;
  EXPECT_EQ(ember_image_encoder_create(text, nullptr, nullptr, nullptr, 0, &none),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(none, nullptr);
  // A session over another model.
  ember_session* other = nullptr;
  ASSERT_EQ(ember_session_create(text, nullptr, nullptr, nullptr, 0, &other), EMBER_OK);
  const int32_t ids[2] = {1, 299};
  EXPECT_EQ(ember_prefill_images(other, encoder_, ids, 2), EMBER_INVALID_ARGUMENT);
  ember_session_free(other);
  ember_model_free(text);
  // A misaligned or small caller arena.
  const size_t bytes = ember_image_encoder_bytes(model_, &options_);
  std::vector<uint8_t> storage(bytes + 2 * kArenaAlignment);
  uint8_t* base =
      storage.data() +
      (kArenaAlignment - reinterpret_cast<uintptr_t>(storage.data()) % kArenaAlignment) %
          kArenaAlignment;
  ember_image_encoder* e = nullptr;
  EXPECT_EQ(ember_image_encoder_create(model_, &options_, nullptr, base + 8, bytes, &e),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_image_encoder_create(model_, &options_, nullptr, base, bytes - 1, &e),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(e, nullptr);
  EXPECT_EQ(ember_image_encoder_add(nullptr, &image, nullptr), EMBER_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace ember
