// A chat's images (Chat::AttachImage): a conversation of image turns replies as one
// session prefilled from nothing with the whole conversation's text and its images' rows
// (Session::PrefillEmbedded, which the image encoder's and the C API's tests hold to the
// tower); a turn's cached image is reused only where the same image lies, so another
// image at the same positions (the same tokens) is prefilled again; old turns dropped for
// room take their images with them; and the refusals.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/arena.h"
#include "runtime/chat/chat.h"
#include "runtime/ember.h"
#include "runtime/model/model_writer.h"
#include "runtime/session.h"
#include "runtime/vision/image_encoder.h"
#include "testing/testing.h"
#include "tools/template/chat_program.h"

namespace ember {
namespace {

// VisionPromptModelSpec ("<boi>" becomes "\n<boi>", 4 "<img>", "<eoi>\n") with a chat
// template and a longer context.
ModelSpec ChatVisionSpec(uint32_t context) {
  ModelSpec spec = testing::VisionPromptModelSpec();
  spec.config.max_context = context;
  spec.tokenizer.chat_template =
      "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
      "{% if add_generation_prompt %}[assistant]{% endif %}";
  EXPECT_TRUE(tools::CompileChatTemplate(&spec.tokenizer).ok());
  return spec;
}

std::vector<uint8_t> Pixels(int width, int height, int seed) {
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  for (size_t i = 0; i < rgb.size(); ++i) {
    rgb[i] = static_cast<uint8_t>((i * (29 + 2 * seed) + 7 * seed) % 251);
  }
  return rgb;
}

// Replies of lowercase letters only, never ending before max_new: the random model's
// text stays valid UTF-8 (the next turn renders it) and every reply has its length.
struct Letters {
  std::vector<uint32_t> bits;
  explicit Letters(const Model& model) {
    const Tokenizer& t = model.tokenizer();
    const uint32_t vocab = t.vocab_size();
    bits.assign((vocab + 31) / 32, 0);
    for (uint32_t id = 0; id < vocab; ++id) {
      const std::string text(
          t.Decode(static_cast<int32_t>(vocab), static_cast<int32_t>(id)));
      bool letters = !text.empty();
      for (char c : text) letters = letters && c >= 'a' && c <= 'z';
      if (letters) bits[id / 32] |= 1u << (id % 32);
    }
  }
  bool allows(int32_t id) const { return (bits[id / 32] >> (id % 32)) & 1; }
  TokenConstraint constraint() {
    TokenConstraint c;
    c.self = this;
    c.allowed = [](void* self, const uint32_t** b) {
      *b = static_cast<Letters*>(self)->bits.data();
      return Status::Ok();
    };
    c.accept = [](void*, int32_t, std::string_view) { return Status::Ok(); };
    c.can_end = [](const void*) { return false; };
    c.reset = [](void*) { return Status::Ok(); };
    return c;
  }
};

bool Collect(void* user, int32_t id, std::string_view) {
  static_cast<std::vector<int32_t>*>(user)->push_back(id);
  return true;
}

constexpr size_t kReply = 4;

// Memory aligned as ImageEncoder::Create wants it.
struct Arena {
  explicit Arena(size_t bytes) : storage(bytes + kArenaAlignment) {
    base = storage.data();
    base += (kArenaAlignment - reinterpret_cast<uintptr_t>(base) % kArenaAlignment) %
            kArenaAlignment;
  }
  std::vector<uint8_t> storage;
  uint8_t* base;
};

// A chat over its own session, with an image encoder beside it.
class ChatImagesTest : public ::testing::Test {
 protected:
  void Open(uint32_t context, uint32_t max_images) {
    loaded_ = testing::LoadSpec(ChatVisionSpec(context));
    ASSERT_TRUE(loaded_.model);
    const Model& model = *loaded_.model;
    letters_ = std::make_unique<Letters>(model);
    constraint_ = letters_->constraint();
    ImageEncoderOptions eo;
    eo.max_images = 8;
    eo.limits.max_width = eo.limits.max_height = 64;
    eo.limits.max_pixels = 64 * 64;
    auto plan = PlanImageEncoder(model, eo);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    plan_ = *plan;
    encoder_arena_ = std::make_unique<Arena>(plan_.arena_bytes());
    auto encoder =
        ImageEncoder::Create(model, plan_, encoder_arena_->base, plan_.arena_bytes());
    ASSERT_TRUE(encoder.ok()) << encoder.status().message();
    encoder_.emplace(std::move(*encoder));
    SessionOptions& so = session_options_;
    so.max_context = context;
    so.max_batch = 8;
    so.max_prompt_bytes = 4096;
    auto session = Session::Create(model, so);
    ASSERT_TRUE(session.ok()) << session.status().message();
    session_.emplace(std::move(*session));
    SamplerOptions greedy;
    greedy.temperature = 0.0f;
    sampler_.emplace(greedy, model.config().vocab_size, session_->sampler_scratch());
    options_.max_images = max_images;
    memory_.assign(Chat::RequiredBytes(*session_, options_) / 8 + 1, 0);
    const Status init =
        chat_.Init(&*session_, &*sampler_, options_, memory_.data(), memory_.size() * 8);
    ASSERT_TRUE(init.ok()) << init.message();
    chat_.set_constraint(&constraint_);
  }

  // Encodes an image (seeded pixels) and attaches it to the next turn.
  Status Attach(int seed) {
    const std::vector<uint8_t> pixels = Pixels(20 + seed, 17 + 2 * seed, seed);
    Result<EncodedImage> e = encoder_->AddRgb({pixels.data(), 20 + seed, 17 + 2 * seed});
    if (!e.ok()) return e.status();
    const size_t d = loaded_.model->config().d_model;
    return chat_.AttachImage(encoder_->rows() + e->first_row * d,
                             PromptImage{e->rows, e->grid.rows, e->grid.cols});
  }

  std::vector<int32_t> Reply(ChatTurnStats* stats) {
    std::vector<int32_t> ids;
    const Status s = chat_.Reply(kReply, nullptr, &Collect, &ids, stats);
    EXPECT_TRUE(s.ok()) << s.message();
    return ids;
  }

  // What a session prefilled from nothing with the conversation as it stands (its
  // tokens and the rows of its images, in order) replies, greedily over the letters.
  std::vector<int32_t> FreshReply() {
    const int32_t* tokens;
    size_t n = 0;
    EXPECT_TRUE(chat_.Tokenize(&tokens, &n).ok());
    const std::vector<int32_t> prompt(tokens, tokens + n);
    const Model& model = *loaded_.model;
    const size_t d = model.config().d_model;
    std::vector<float> rows;
    for (size_t j = 0; j < chat_.num_images(); ++j) {
      rows.insert(rows.end(), chat_.image_rows(j),
                  chat_.image_rows(j) + chat_.image(j).rows * d);
    }
    SessionOptions so;
    so.max_context = session_->max_context();
    so.max_batch = 8;
    auto fresh = Session::Create(model, so);
    EXPECT_TRUE(fresh.ok());
    if (!fresh.ok()) return {};
    EmbeddedRows embedded;
    embedded.marker = model.vision()->image_token_id;
    embedded.rows = rows.data();
    embedded.count = rows.size() / d;
    embedded.bidirectional = model.vision()->image_blocks_bidirectional;
    const Status prefilled =
        fresh->PrefillEmbedded(prompt.data(), prompt.size(), embedded);
    EXPECT_TRUE(prefilled.ok()) << prefilled.message();
    std::vector<int32_t> ids;
    const size_t vocab = model.config().vocab_size;
    for (size_t i = 0; i < kReply && prefilled.ok(); ++i) {
      int32_t best = -1;
      for (size_t t = 0; t < vocab; ++t) {
        if (letters_->allows(static_cast<int32_t>(t)) &&
            (best < 0 || fresh->logits()[t] > fresh->logits()[best])) {
          best = static_cast<int32_t>(t);
        }
      }
      ids.push_back(best);
      if (i + 1 < kReply) {
        EXPECT_TRUE(fresh->Decode(best).ok());
      }
    }
    return ids;
  }

  testing::LoadedModel loaded_;
  std::unique_ptr<Letters> letters_;
  TokenConstraint constraint_;
  ImageEncoderPlan plan_;
  std::unique_ptr<Arena> encoder_arena_;
  std::optional<ImageEncoder> encoder_;
  std::optional<Session> session_;
  std::optional<Sampler> sampler_;
  SessionOptions session_options_;
  ChatOptions options_;
  std::vector<uint64_t> memory_;
  Chat chat_;
};

// Turns with images before their text (no marker), with markers in the text, and none:
// each reply is the fresh session's, and the turns after an image reuse its cached rows.
TEST_F(ChatImagesTest, RepliesAsOnePrefillOfTheWholeConversation) {
  Open(256, 4);
  ASSERT_TRUE(chat_.SetSystem("Look closely.").ok());
  ASSERT_TRUE(Attach(1).ok());
  EXPECT_EQ(chat_.pending_images(), 1u);
  ASSERT_TRUE(chat_.Add("user", "What is this?").ok());
  EXPECT_EQ(chat_.message(1).content, "<boi>What is this?") << "the marker goes first";
  std::vector<int32_t> want = FreshReply();
  ChatTurnStats stats;
  EXPECT_EQ(Reply(&stats), want);
  EXPECT_EQ(stats.images, 1u);
  EXPECT_EQ(stats.prefilled_images, 1u);

  // Two images at the turn's markers.
  ASSERT_TRUE(Attach(2).ok());
  ASSERT_TRUE(Attach(3).ok());
  ASSERT_TRUE(chat_.Add("user", "Compare <boi> with <boi>, please.").ok());
  want = FreshReply();
  EXPECT_EQ(Reply(&stats), want);
  EXPECT_EQ(stats.images, 3u);
  EXPECT_EQ(stats.prefilled_images, 2u) << "the first turn's image is cached";
  EXPECT_GT(stats.reused_tokens, 10u);

  // Text only: every image cached.
  ASSERT_TRUE(chat_.Add("user", "Thanks.").ok());
  want = FreshReply();
  EXPECT_EQ(Reply(&stats), want);
  EXPECT_EQ(stats.prefilled_images, 0u);
  EXPECT_EQ(chat_.num_images(), 3u);
}

// After Reset, the same text with another image makes the same tokens as before: the
// cache holds the old image's rows there, which must not be reused.
TEST_F(ChatImagesTest, AnotherImageAtTheSamePlaceIsPrefilledAgain) {
  Open(256, 4);
  ASSERT_TRUE(Attach(1).ok());
  ASSERT_TRUE(chat_.Add("user", "Describe.").ok());
  ChatTurnStats stats;
  Reply(&stats);
  const int32_t* tokens;
  size_t n = 0;
  chat_.Reset();
  EXPECT_EQ(chat_.num_images(), 0u);
  ASSERT_TRUE(Attach(4).ok());
  ASSERT_TRUE(chat_.Add("user", "Describe.").ok());
  ASSERT_TRUE(chat_.Tokenize(&tokens, &n).ok());
  size_t image_at = 0;
  while (image_at < n && tokens[image_at] != loaded_.model->vision()->image_token_id) {
    ++image_at;
  }
  ASSERT_LT(image_at, n);
  ASSERT_GE(session_->position(), n);
  ASSERT_TRUE(std::equal(tokens, tokens + n, session_->tokens()))
      << "the cache holds the same tokens";
  const std::vector<int32_t> want = FreshReply();
  EXPECT_EQ(Reply(&stats), want);
  EXPECT_EQ(stats.prefilled_images, 1u);
  EXPECT_EQ(stats.reused_tokens, image_at) << "reused up to the image, not into it";
}

// A context too small for the conversation drops the oldest turns and their images;
// the reply is then what a chat on a fresh session says to the turns left, given the
// images those turns had (encoded again here, from the seeds this test gave them).
TEST_F(ChatImagesTest, DroppedTurnsTakeTheirImages) {
  Open(64, 4);
  ChatTurnStats stats;
  std::vector<int32_t> got;
  int turns = 0;
  while (turns < 4 && stats.dropped_messages == 0) {
    ASSERT_TRUE(Attach(++turns).ok());
    ASSERT_TRUE(chat_.Add("user", "And this?").ok());
    got = Reply(&stats);
  }
  ASSERT_GT(stats.dropped_messages, 0u) << "the context never filled";
  size_t users = 0, images = 0;
  for (size_t i = 0; i < chat_.num_messages(); ++i) {
    users += chat_.message(i).role == "user";
    images += chat_.message_images(i);
  }
  EXPECT_EQ(images, chat_.num_images());
  EXPECT_EQ(chat_.num_images(), users) << "each turn left has its own image";
  EXPECT_EQ(stats.images, users);
  ASSERT_LT(users, static_cast<size_t>(turns));

  // The same turns (the last reply aside), their images encoded again, on a fresh
  // session: the same reply.
  auto session = Session::Create(*loaded_.model, session_options_);
  ASSERT_TRUE(session.ok());
  Chat fresh;
  std::vector<uint64_t> memory(Chat::RequiredBytes(*session, options_) / 8 + 1);
  ASSERT_TRUE(
      fresh.Init(&*session, &*sampler_, options_, memory.data(), memory.size() * 8).ok());
  fresh.set_constraint(&constraint_);
  int seed = turns - static_cast<int>(users);
  for (size_t i = 0; i + 1 < chat_.num_messages(); ++i) {
    const ChatMessage& m = chat_.message(i);
    if (m.role == "user") {
      ++seed;
      const std::vector<uint8_t> pixels = Pixels(20 + seed, 17 + 2 * seed, seed);
      Result<EncodedImage> e =
          encoder_->AddRgb({pixels.data(), 20 + seed, 17 + 2 * seed});
      ASSERT_TRUE(e.ok());
      const size_t d = loaded_.model->config().d_model;
      ASSERT_TRUE(fresh
                      .AttachImage(encoder_->rows() + e->first_row * d,
                                   PromptImage{e->rows, e->grid.rows, e->grid.cols})
                      .ok());
    }
    ASSERT_TRUE(fresh.Add(m.role, m.content).ok());
  }
  std::vector<int32_t> again;
  ChatTurnStats fresh_stats;
  ASSERT_TRUE(fresh.Reply(kReply, nullptr, &Collect, &again, &fresh_stats).ok());
  EXPECT_EQ(fresh_stats.dropped_messages, 0u);
  EXPECT_EQ(fresh_stats.prompt_tokens, stats.prompt_tokens);
  EXPECT_EQ(again, got);
}

TEST_F(ChatImagesTest, Refusals) {
  Open(256, 2);
  // Markers that are not the images'.
  ASSERT_TRUE(Attach(1).ok());
  EXPECT_EQ(chat_.Add("user", "<boi> and <boi>").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(chat_.num_messages(), 0u);
  EXPECT_EQ(chat_.pending_images(), 1u) << "a refused turn keeps the image for the next";
  EXPECT_EQ(chat_.Add("assistant", "I see.").code(), StatusCode::kOk)
      << "an assistant turn leaves it pending";
  EXPECT_EQ(chat_.pending_images(), 1u);
  ASSERT_TRUE(Attach(2).ok());
  EXPECT_EQ(Attach(3).code(), StatusCode::kResourceExhausted) << "max_images 2";
  // A marker without an image: the conversation's markers are not its images.
  ASSERT_TRUE(chat_.Add("user", "Both.").ok());
  ASSERT_TRUE(chat_.Add("user", "And <boi>?").ok());
  ChatTurnStats stats;
  std::vector<int32_t> ids;
  EXPECT_EQ(chat_.Reply(kReply, nullptr, &Collect, &ids, &stats).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(stats.prompt_tokens, 0u) << "refused before anything was prefilled";
  EXPECT_EQ(chat_.AttachImage(nullptr, PromptImage{4, 0, 0}).code(),
            StatusCode::kResourceExhausted);
  chat_.Reset();
  EXPECT_EQ(chat_.AttachImage(nullptr, PromptImage{4, 0, 0}).code(),
            StatusCode::kInvalidArgument);

  // A text-only model (with a chat template) takes no images.
  ModelSpec text_spec = testing::TinyModelSpec();
  text_spec.tokenizer.chat_template =
      "{% for m in messages %}{{ m.content }}{% endfor %}";
  ASSERT_TRUE(tools::CompileChatTemplate(&text_spec.tokenizer).ok());
  const testing::LoadedModel text = testing::LoadSpec(text_spec);
  ASSERT_TRUE(text.model);
  auto session = Session::Create(*text.model, SessionOptions());
  ASSERT_TRUE(session.ok());
  ChatOptions options;
  options.max_images = 1;
  std::vector<uint64_t> memory(Chat::RequiredBytes(*session, options) / 8 + 1);
  Chat chat;
  EXPECT_EQ(
      chat.Init(&*session, &*sampler_, options, memory.data(), memory.size() * 8).code(),
      StatusCode::kInvalidArgument);
}

int Keep(void* user, int32_t id, const char*, size_t) {
  static_cast<std::vector<int32_t>*>(user)->push_back(id);
  return 1;
}

// The C API: ember_chat_attach_image gives a turn an encoder's image by its index; the
// reply's logits are a session's prefilled with the turn and that image's rows alone.
TEST(ChatImagesCApiTest, AttachImageByIndex) {
  std::vector<uint8_t> raw;
  ASSERT_TRUE(SerializeModel(ChatVisionSpec(256), &raw).ok());
  const testing::AlignedBytes bytes(raw);
  ember_model* model = nullptr;
  ASSERT_EQ(ember_model_from_memory(bytes.data(), bytes.size(), &model), EMBER_OK)
      << ember_last_error();
  ember_vision_options vo;
  ember_vision_options_default(&vo);
  vo.max_images = 2;
  vo.max_width = vo.max_height = 64;
  vo.max_pixels = 64 * 64;
  ember_image_encoder* encoder = nullptr;
  ASSERT_EQ(ember_image_encoder_create(model, &vo, nullptr, nullptr, 0, &encoder),
            EMBER_OK)
      << ember_last_error();
  std::vector<uint8_t> pixels[2] = {Pixels(21, 19, 1), Pixels(22, 21, 2)};
  for (int i = 0; i < 2; ++i) {
    ember_image image;
    ember_image_default(&image);
    image.rgb = pixels[i].data();
    image.width = 21 + i;
    image.height = 19 + 2 * i;
    ASSERT_EQ(ember_image_encoder_add(encoder, &image, nullptr), EMBER_OK);
  }
  ember_session_options so;
  ember_session_options_default(&so);
  so.max_context = 256;
  so.max_batch = 8;
  so.max_prompt_bytes = 4096;
  ember_session* session = nullptr;
  ASSERT_EQ(ember_session_create(model, &so, nullptr, nullptr, 0, &session), EMBER_OK)
      << ember_last_error();
  ember_chat_options co;
  ember_chat_options_default(&co);
  ember_chat* plain = nullptr;
  ASSERT_EQ(ember_chat_create(session, &co, &plain), EMBER_OK) << ember_last_error();
  EXPECT_EQ(ember_chat_attach_image(plain, encoder, 0), EMBER_RESOURCE_EXHAUSTED)
      << "max_images 0";
  ember_chat_free(plain);
  co.max_images = 1;
  ember_chat* chat = nullptr;
  ASSERT_EQ(ember_chat_create(session, &co, &chat), EMBER_OK) << ember_last_error();
  EXPECT_EQ(ember_chat_attach_image(chat, encoder, 2), EMBER_OUT_OF_RANGE);
  EXPECT_EQ(ember_chat_attach_image(chat, nullptr, 0), EMBER_INVALID_ARGUMENT);
  ASSERT_EQ(ember_chat_attach_image(chat, encoder, 1), EMBER_OK) << ember_last_error();
  EXPECT_EQ(ember_chat_attach_image(chat, encoder, 0), EMBER_RESOURCE_EXHAUSTED);
  ASSERT_EQ(ember_chat_add(chat, "user", "Hi", 2), EMBER_OK) << ember_last_error();
  std::vector<int32_t> ids;
  ASSERT_EQ(ember_chat_generate(chat, 1, &Keep, &ids, nullptr), EMBER_OK)
      << ember_last_error();
  ember_chat_stats stats;
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(ember_chat_last_stats(chat, &stats), EMBER_OK);
  const size_t n = stats.prompt_tokens;

  // The same turn's tokens (a chat of the runtime's renders them), prefilled with the
  // second image's rows in a session of its own.
  size_t n_rows = 0;
  const float* rows = ember_image_encoder_rows(encoder, &n_rows);
  ASSERT_EQ(n_rows, 8u);
  const testing::LoadedModel loaded = testing::LoadSpec(ChatVisionSpec(256));
  SessionOptions options;
  options.max_context = 256;
  options.max_batch = 8;
  options.max_prompt_bytes = 4096;
  auto fresh = Session::Create(*loaded.model, options);
  ASSERT_TRUE(fresh.ok());
  EmbeddedRows second;
  second.marker = loaded.model->vision()->image_token_id;
  second.rows = rows + 4 * loaded.model->config().d_model;
  second.count = 4;
  second.bidirectional = loaded.model->vision()->image_blocks_bidirectional;
  ChatOptions chat_options;
  chat_options.max_images = 1;
  std::vector<uint64_t> memory(Chat::RequiredBytes(*fresh, chat_options) / 8 + 1);
  Sampler sampler(SamplerOptions(), loaded.model->config().vocab_size,
                  fresh->sampler_scratch());
  Chat reference;
  ASSERT_TRUE(
      reference.Init(&*fresh, &sampler, chat_options, memory.data(), memory.size() * 8)
          .ok());
  ASSERT_TRUE(reference.AttachImage(second.rows, PromptImage{4, 0, 0}).ok());
  ASSERT_TRUE(reference.Add("user", "Hi").ok());
  const int32_t* tokens;
  size_t count = 0;
  ASSERT_TRUE(reference.Tokenize(&tokens, &count).ok());
  ASSERT_EQ(count, n);
  const std::vector<int32_t> prompt(tokens, tokens + n);
  ASSERT_EQ(std::count(prompt.begin(), prompt.end(), second.marker), 4);
  ASSERT_TRUE(fresh->PrefillEmbedded(prompt.data(), n, second).ok());
  const size_t vocab = loaded.model->config().vocab_size;
  float worst = 0.0f, largest = 0.0f;
  for (size_t t = 0; t < vocab; ++t) {
    worst = std::max(worst, std::fabs(ember_logits(session)[t] - fresh->logits()[t]));
    largest = std::max(largest, std::fabs(fresh->logits()[t]));
  }
  EXPECT_LE(worst, 1e-5f * largest + 1e-6f);
  ember_chat_free(chat);
  ember_session_free(session);
  ember_image_encoder_free(encoder);
  ember_model_free(model);
}

}  // namespace
}  // namespace ember
