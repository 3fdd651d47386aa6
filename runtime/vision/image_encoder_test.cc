// ImageEncoder: an image through decode, the model's processor and the tower equals
// those steps run one by one; its limits refuse clearly; and a prompt expanded for the
// image holds one image token per row, which a session fills (image_prompt.h).
#include "runtime/vision/image_encoder.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/session.h"
#include "runtime/vision/image_decode.h"
#include "runtime/vision/image_decode_test_data.h"
#include "runtime/vision/image_prompt.h"
#include "testing/testing.h"

namespace ember {
namespace {

constexpr int32_t kBoi = 297, kEoi = 298, kImageToken = 299;

ModelSpec VisionSpec() { return testing::VisionPromptModelSpec(); }

struct Arena {
  explicit Arena(size_t bytes) : storage(bytes + kArenaAlignment) {
    base = storage.data();
    base += (kArenaAlignment - reinterpret_cast<uintptr_t>(base) % kArenaAlignment) %
            kArenaAlignment;
  }
  std::vector<uint8_t> storage;
  uint8_t* base;
};

// Limits well above the test images, planned small (the default's 12.6 MP would make
// the tests' arenas hundreds of megabytes).
ImageLimits SmallLimits() {
  ImageLimits limits;
  limits.max_width = limits.max_height = 64;
  limits.max_pixels = 64 * 64;
  return limits;
}

// A width x height image of varied bytes.
std::vector<uint8_t> Pixels(int width, int height) {
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<uint8_t>((i * 37) % 251);
  return rgb;
}

// The rows of `image` by hand: ProcessImage, then a tower of its own over each tile.
std::vector<float> ByHand(const Model& model, const RgbImage& image) {
  const VisionConfig& v = *model.vision();
  const ImageLimits limits = SmallLimits();
  std::vector<uint8_t> scratch(ProcessScratchBytes(v.processor, limits));
  std::vector<float> pixels(size_t{3} * v.image_size * v.image_size *
                            MaxImageTiles(v.processor, limits));
  ImageGrid grid;
  EXPECT_TRUE(ProcessImage(v.processor, image, scratch.data(), scratch.size(),
                           pixels.data(), pixels.size(), &grid)
                  .ok());
  auto plan = PlanVisionTower(model);
  EXPECT_TRUE(plan.ok());
  Arena arena(plan->arena_bytes());
  auto tower = VisionTower::Create(model, *plan, arena.base, plan->arena_bytes());
  EXPECT_TRUE(tower.ok());
  const size_t d = model.config().d_model, rows = v.tokens_per_image();
  std::vector<float> out(grid.tiles * rows * d);
  for (int t = 0; t < grid.tiles; ++t) {
    tower->EncodeTile(pixels.data() + size_t{3} * v.image_size * v.image_size * t,
                      out.data() + t * rows * d);
  }
  return out;
}

TEST(ImageEncoderTest, RowsEqualTheStepsRunOneByOne) {
  const testing::LoadedModel m = testing::LoadSpec(VisionSpec());
  ASSERT_TRUE(m.model);
  ImageEncoderOptions options;
  options.max_images = 2;
  options.limits = SmallLimits();
  auto plan = PlanImageEncoder(*m.model, options);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  Arena arena(plan->arena_bytes());
  for (int threads : {1, 2}) {
    auto pool = ThreadPool::Create(threads);
    ASSERT_TRUE(pool.ok());
    auto encoder = ImageEncoder::Create(*m.model, *plan, arena.base, plan->arena_bytes(),
                                        pool->get());
    ASSERT_TRUE(encoder.ok()) << encoder.status().message();
    // A PNG (decoded here by hand too), then RGB in caller memory.
    const ImageLimits limits = SmallLimits();
    std::vector<uint8_t> scratch(DecodeScratchBytes(limits)), rgb(2 * 2 * 3);
    auto decoded = DecodeImage(kPngRgba, sizeof(kPngRgba), limits, AlphaMode::kOverWhite,
                               scratch.data(), scratch.size(), rgb.data(), rgb.size());
    ASSERT_TRUE(decoded.ok());
    const std::vector<float> first = ByHand(*m.model, *decoded);
    const std::vector<uint8_t> pixels = Pixels(45, 29);
    const RgbImage second_image{pixels.data(), 45, 29};
    const std::vector<float> second = ByHand(*m.model, second_image);

    auto a = encoder->AddEncoded(kPngRgba, sizeof(kPngRgba));
    ASSERT_TRUE(a.ok()) << a.status().message();
    auto b = encoder->AddRgb(second_image);
    ASSERT_TRUE(b.ok()) << b.status().message();
    const size_t d = m.model->config().d_model;
    EXPECT_EQ(a->first_row, 0u);
    EXPECT_EQ(a->rows, 4u);
    EXPECT_EQ(b->first_row, 4u);
    EXPECT_EQ(b->rows, 4u);
    ASSERT_EQ(encoder->row_count(), 8u);
    EXPECT_EQ(memcmp(encoder->rows(), first.data(), first.size() * sizeof(float)), 0);
    EXPECT_EQ(
        memcmp(encoder->rows() + 4 * d, second.data(), second.size() * sizeof(float)), 0);
    const EmbeddedRows e = encoder->embedded();
    EXPECT_EQ(e.marker, kImageToken);
    EXPECT_EQ(e.count, 8u);
    EXPECT_TRUE(e.bidirectional);  // the pool tower: Gemma 3's

    // A third image is past the plan; Clear starts over.
    auto c = encoder->AddRgb(second_image);
    EXPECT_EQ(c.status().code(), StatusCode::kOutOfRange);
    encoder->Clear();
    EXPECT_EQ(encoder->row_count(), 0u);
    EXPECT_TRUE(encoder->AddRgb(second_image).ok());
    EXPECT_EQ(memcmp(encoder->rows(), second.data(), second.size() * sizeof(float)), 0);
  }
}

// The encoder lends the tower's bytes to the decoder and the processor before each
// image, so the tower keeps nothing there between tiles: what it needs (its layers' KV
// bookkeeping) it writes again for each. It once wrote that at creation only, and a
// decode that reached it made the attention read garbage row pointers (a SmolVLM-shaped
// tower of 64 patches crashed). Here every byte of the tower's buffer is scribbled over
// before each image.
TEST(ImageEncoderTest, TheTowerKeepsNothingInItsBytesBetweenImages) {
  ModelSpec spec = testing::TinyModelSpec();
  testing::AddVisionTower(
      &spec,
      testing::SiglipTestConfig(32, 2, 72, 2, 64, 8, ImageConnector::kPixelShuffle, 2),
      11);
  const testing::LoadedModel m = testing::LoadSpec(spec);
  ASSERT_TRUE(m.model);
  ImageEncoderOptions options;
  options.max_images = 2;
  options.limits = SmallLimits();
  auto plan = PlanImageEncoder(*m.model, options);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  Arena arena(plan->arena_bytes());
  auto encoder = ImageEncoder::Create(*m.model, *plan, arena.base, plan->arena_bytes());
  ASSERT_TRUE(encoder.ok()) << encoder.status().message();
  const std::vector<uint8_t> pixels = Pixels(61, 47);
  const RgbImage image{pixels.data(), 61, 47};
  const std::vector<float> want = ByHand(*m.model, image);
  const ArenaPlan::Buffer& tower = plan->arena.buffer(plan->ids.tower.index);
  ASSERT_GT(tower.bytes, 0u);
  for (int i = 0; i < 2; ++i) {
    memset(arena.base + tower.offset, 0xA5 + i, tower.bytes);
    auto e = encoder->AddRgb(image);
    ASSERT_TRUE(e.ok()) << e.status().message();
    ASSERT_EQ(e->rows * m.model->config().d_model, want.size());
    EXPECT_EQ(memcmp(encoder->rows() + e->first_row * m.model->config().d_model,
                     want.data(), want.size() * sizeof(float)),
              0)
        << "image " << i;
  }
}

TEST(ImageEncoderTest, RefusesWhatItWasNotPlannedFor) {
  const testing::LoadedModel m = testing::LoadSpec(VisionSpec());
  ASSERT_TRUE(m.model);
  ImageEncoderOptions options;
  options.limits.max_width = 40;
  options.limits.max_height = 40;
  options.limits.max_pixels = 1200;
  auto plan = PlanImageEncoder(*m.model, options);
  ASSERT_TRUE(plan.ok());
  Arena arena(plan->arena_bytes());
  auto encoder = ImageEncoder::Create(*m.model, *plan, arena.base, plan->arena_bytes());
  ASSERT_TRUE(encoder.ok());
  const std::vector<uint8_t> pixels = Pixels(41, 31);  // room for every size below
  EXPECT_EQ(encoder->AddRgb({pixels.data(), 41, 10}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(encoder->AddRgb({pixels.data(), 40, 31}).status().code(),
            StatusCode::kInvalidArgument);  // 1240 pixels
  EXPECT_EQ(encoder->AddRgb({nullptr, 4, 4}).status().code(),
            StatusCode::kInvalidArgument);
  const uint8_t garbage[] = {0x89, 'P', 'N', 'G', 1, 2, 3};
  EXPECT_EQ(encoder->AddEncoded(garbage, sizeof(garbage)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(encoder->images(), 0);
  EXPECT_TRUE(encoder->AddRgb({pixels.data(), 40, 30}).ok());
  // A small arena, a misaligned one, a model without a tower.
  EXPECT_FALSE(
      ImageEncoder::Create(*m.model, *plan, arena.base, plan->arena_bytes() - 1).ok());
  EXPECT_FALSE(
      ImageEncoder::Create(*m.model, *plan, arena.base + 8, plan->arena_bytes()).ok());
  const testing::LoadedModel text = testing::LoadSpec(testing::TinyModelSpec());
  EXPECT_EQ(PlanImageEncoder(*text.model, options).status().code(),
            StatusCode::kInvalidArgument);
  options.max_images = 0;
  EXPECT_FALSE(PlanImageEncoder(*m.model, options).ok());
}

// The prompt the processor would make, through the tokenizer, into a session.
TEST(ImageEncoderTest, AnExpandedPromptTakesTheRowsInASession) {
  const testing::LoadedModel m = testing::LoadSpec(VisionSpec());
  ASSERT_TRUE(m.model);
  const VisionConfig& v = *m.model->vision();
  ASSERT_EQ(v.prompt.marker, "<boi>");  // through the file
  ImageEncoderOptions options;
  options.max_images = 2;
  options.limits = SmallLimits();
  auto plan = PlanImageEncoder(*m.model, options);
  ASSERT_TRUE(plan.ok());
  Arena arena(plan->arena_bytes());
  auto encoder = ImageEncoder::Create(*m.model, *plan, arena.base, plan->arena_bytes());
  ASSERT_TRUE(encoder.ok());
  const std::vector<uint8_t> pixels = Pixels(20, 24);
  PromptImage rows[2];
  for (PromptImage& r : rows) {
    auto added = encoder->AddRgb({pixels.data(), 20, 24});
    ASSERT_TRUE(added.ok());
    r.rows = added->rows;
  }
  const std::string text = "look<boi>and<boi>";
  char out[256];
  size_t length = 0;
  ASSERT_TRUE(ExpandImagePrompt(v.prompt, text, rows, 2, out, sizeof(out), &length).ok());
  EXPECT_EQ(
      std::string(out, length),
      "look\n<boi><img><img><img><img><eoi>\nand\n<boi><img><img><img><img><eoi>\n");
  const Tokenizer& tok = m.model->tokenizer();
  std::vector<int32_t> ids(tok.EncodeCapacity(length));
  size_t n = 0;
  EncodeOptions encode;
  encode.parse_special = true;
  ASSERT_TRUE(
      tok.Encode(std::string_view(out, length), encode, ids.data(), ids.size(), &n).ok());
  ids.resize(n);
  size_t images = 0;
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] == kImageToken) {
      ++images;
      EXPECT_TRUE(ids[i - 1] == kImageToken || ids[i - 1] == kBoi) << i;
    }
  }
  EXPECT_EQ(images, 8u);

  SessionOptions so;
  so.max_context = 64;
  so.max_batch = 16;
  auto session = Session::Create(*m.model, so);
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(session->PrefillEmbedded(ids.data(), n, encoder->embedded()).ok());
  // The same rows given by hand: the same logits.
  const std::vector<float> logits(session->logits(),
                                  session->logits() + m.model->config().vocab_size);
  std::vector<float> hand(encoder->rows(),
                          encoder->rows() + 8 * m.model->config().d_model);
  EmbeddedRows given = encoder->embedded();
  given.rows = hand.data();
  auto again = Session::Create(*m.model, so);
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(again->PrefillEmbedded(ids.data(), n, given).ok());
  EXPECT_EQ(memcmp(again->logits(), logits.data(), logits.size() * sizeof(float)), 0);
  // Other rows: other logits (the rows are read).
  for (float& x : hand) x += 0.5f;
  auto other = Session::Create(*m.model, so);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(other->PrefillEmbedded(ids.data(), n, given).ok());
  EXPECT_NE(memcmp(other->logits(), logits.data(), logits.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace ember
