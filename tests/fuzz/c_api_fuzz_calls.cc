// The C API sequence fuzzer's calls (see c_api_fuzz_calls.h).
#include "tests/fuzz/c_api_fuzz_calls.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace ember::fuzz {
namespace {

// The buffers the harness owns (static: one input runs at a time, and a state buffer per
// input would cost more than the calls) beside text_buffer and render_buffer.
constexpr size_t kMaxIds = 96, kStateBytes = size_t{1} << 20;
int32_t ids_[kMaxIds];
uint8_t state_[kStateBytes];
// Sessions past this arena are not created: a fuzzed input must stay quick and small.
constexpr size_t kMaxArenaBytes = size_t{32} << 20;

const size_t kEdgeSizes[] = {0, 1, 2, 64, 65, SIZE_MAX, SIZE_MAX - 1, SIZE_MAX / 2 + 1,
                             SIZE_MAX / 4 + 1, SIZE_MAX / 32 + 1, size_t{INT32_MAX},
                             size_t{UINT32_MAX}, size_t{UINT32_MAX} + 1};
const float kEdgeFloats[] = {0.0f, 1e-5f, 0.5f, 1.0f, 1.5f, -1.0f, 1e30f, NAN, INFINITY};
const char* const kIsas[] = {nullptr, "native", "sse4", "avx2", "avx512", "neon", "", "x"};
const char kLongStop[] =
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901"
    "2345678901234567890123456789012345678901234567890123456789";  // > 128 bytes
const char* const kStops[] = {"a", "", "\n", "Hello", "[assistant]", "\xff", kLongStop};

}  // namespace

char text_buffer[kTextBytes];
char render_buffer[kRenderBytes];
const int32_t kEdgeInts[kNumEdgeInts] = {INT32_MIN, -2, -1, 0, 1, 2, INT32_MAX};
const uint32_t kEdgeU32[kNumEdgeU32] = {0, 1, 2, 3, 16, 63, 64, 65, INT32_MAX, UINT32_MAX};
const char* const kRoles[kNumRoles] = {"user", "assistant", "system", "tool",
                                       "",     "\xff",      nullptr};

void Fail(const char* call, const char* what) {
  fprintf(stderr, "c_api_fuzzer: %s: %s (last error: %s)\n", call, what,
          ember_last_error());
  abort();
}

ember_status Check(ember_status s, const char* call) {
  if (s == EMBER_OK) return s;
  if (s < EMBER_INVALID_ARGUMENT || s > EMBER_INTERNAL) Fail(call, "an unknown status");
  if (s == EMBER_INTERNAL) Fail(call, "an internal error");
  if (ember_last_error()[0] == '\0') Fail(call, "failed without a message");
  return s;
}

int StopEarly(void* user, int32_t token, const char* bytes, size_t length) {
  auto* s = static_cast<Stopper*>(user);
  if (token == -1) return 0;  // the text held back for stop strings, at the end
  if (token < 0 || static_cast<uint32_t>(token) >= s->vocab) {
    Fail("callback", "a token outside the vocabulary");
  }
  if (length && !bytes) Fail("callback", "bytes NULL with a length");
  volatile char sink = 0;
  for (size_t i = 0; i < length; ++i) sink = sink + bytes[i];  // readable
  if (++s->seen > s->limit) Fail("callback", "called again after it returned 0");
  return s->seen < s->limit;
}

CallProgram::~CallProgram() {
  ember_chat_free(chat_);
  FreeSession();
}

size_t CallProgram::EdgeSize() { return Pick(kEdgeSizes); }

size_t CallProgram::LengthIn(size_t owned) {
  const uint8_t b = Byte();
  switch (b % 4) {
    case 0: return 0;
    case 1: return owned;
    case 2: return owned > 0 ? owned - 1 : 0;
    default: return owned > 0 ? (b / 4) % (owned + 1) : 0;
  }
}

int32_t CallProgram::Token() {
  const uint8_t b = Byte();
  const int32_t v = static_cast<int32_t>(vocab_);
  const int32_t edges[] = {INT32_MIN, -1, 0, v - 1, v, v + 1, INT32_MAX};
  return b < 32 ? edges[b % 7] : static_cast<int32_t>((b * 7u + Byte()) % vocab_);
}

size_t CallProgram::FillText() {
  const size_t n = Byte() % (kTextBytes / 4);
  memset(text_buffer, 0, sizeof(text_buffer));
  for (size_t i = 0; i < n && at_ < size_; ++i) text_buffer[i] = static_cast<char>(Byte());
  return n;
}

size_t CallProgram::FillIds() {
  const size_t n = Byte() % (kMaxIds + 1);
  for (size_t i = 0; i < kMaxIds; ++i) ids_[i] = i < n ? Token() : 0;
  return n;
}

ember_session* CallProgram::SessionArg() {
  return Byte() % 8 == 0 ? nullptr : session_;
}

void CallProgram::Run() {
  vocab_ = ember_model_vocab_size(model_);
  for (int calls = 0; calls < kMaxCalls && at_ < size_; ++calls) {
    switch (static_cast<Call>(Byte() % kNumCalls)) {
      case kCreateSession: CreateSession(); break;
      case kFreeSession:
        ember_chat_free(chat_);  // a chat must not outlive its session
        chat_ = nullptr;
        FreeSession();
        break;
      case kTokenize: Tokenize(); break;
      case kDetokenize: Detokenize(); break;
      case kPrefill: Prefill(); break;
      case kDecode: Decode(); break;
      case kSample: Sample(); break;
      case kGenerate: Generate(); break;
      case kShiftContext: ShiftContext(); break;
      case kSaveRestore: SaveRestore(); break;
      case kSetSampler: SetSampler(); break;
      case kResetSession: {
        ember_session_reset(SessionArg());
        const size_t position = ember_session_position(session_);
        const float* logits = session_ ? ember_logits(session_) : nullptr;
        if (session_ && position > ember_model_max_context(model_)) {
          Fail("ember_session_position", "past the model's context");
        }
        if (logits) (void)*(volatile const float*)&logits[vocab_ - 1];
        break;
      }
      case kChatCreate: ChatCreate(); break;
      case kChatAdd: ChatAdd(); break;
      case kChatGenerate: ChatGenerate(); break;
      case kChatOther: ChatOther(); break;
      case kRender: Render(); break;
      case kArenaBytes: ArenaBytes(); break;
      case kNumCalls: break;
    }
  }
}

void CallProgram::FillSessionOptions(ember_session_options* o) {
  ember_session_options_default(o);
  const uint32_t struct_sizes[] = {
      sizeof(ember_session_options),
      offsetof(ember_session_options, backend),
      offsetof(ember_session_options, isa),
      offsetof(ember_session_options, kv_type),
      0,
      4,
      sizeof(ember_session_options) + 8,
      UINT32_MAX};
  const uint8_t fields = Byte();
  if (fields & 1) o->struct_size = Pick(struct_sizes);
  if (fields & 2) o->max_context = Pick(kEdgeU32);
  if (fields & 4) o->max_batch = Pick(kEdgeU32);
  if (fields & 8) o->max_prompt_bytes = Pick(kEdgeU32);
  if (fields & 16) o->all_logits = Pick(kEdgeInts);
  if (fields & 32) {
    o->backend = Byte() % 4 == 3 ? UINT32_MAX : Byte() % 3;
    o->ignore_baked_prompt = Byte() % 2;
    o->isa = Pick(kIsas);
  }
  if (fields & 64) o->kv_type = Byte() % 5 == 4 ? UINT32_MAX : Byte() % 4;
  if (fields & 128) {
    o->context_shift = Pick(kEdgeInts);
    o->context_keep = Pick(kEdgeU32);
  }
}

void CallProgram::CreateSession() {
  ember_chat_free(chat_);
  chat_ = nullptr;
  FreeSession();
  ember_session_options options;
  FillSessionOptions(&options);
  const ember_session_options* o = Byte() % 8 == 0 ? nullptr : &options;
  const size_t bytes = ember_arena_bytes(model_, o);
  ember_session* session = nullptr;
  const uint8_t how = Byte() % 4;
  if (bytes == 0) {
    // Options ember_arena_bytes refuses, session creation refuses too.
    if (Check(ember_session_create(model_, o, nullptr, nullptr, 0, &session),
              "ember_session_create") == EMBER_OK) {
      Fail("ember_session_create", "accepted options ember_arena_bytes refused");
    }
    return;
  }
  if (bytes > kMaxArenaBytes) return;
  if (how == 0) {
    Check(ember_session_create(model_, o, nullptr, nullptr, 0, &session),
          "ember_session_create");
  } else {
    // A caller arena at any alignment: exactly the size asked (which must do), or one
    // byte short (refused).
    const size_t offset = Byte() % 64;
    const bool short_one = how == 3;
    const size_t given = short_one ? bytes - 1 : bytes;
    arena_ = new uint8_t[offset + given];
    const ember_status s = Check(
        ember_session_create(model_, o, nullptr, arena_ + offset, given, &session),
        "ember_session_create");
    if (s == EMBER_OK && short_one) Fail("ember_session_create", "a short arena taken");
    if (s != EMBER_OK && !short_one) {
      Fail("ember_session_create", "refused an arena of ember_arena_bytes");
    }
    if (s != EMBER_OK) {
      delete[] arena_;
      arena_ = nullptr;
    }
  }
  session_ = session;
}

void CallProgram::FreeSession() {
  ember_session_free(session_);
  session_ = nullptr;
  delete[] arena_;
  arena_ = nullptr;
}

void CallProgram::Tokenize() {
  ember_session* session = SessionArg();
  const size_t filled = FillText();
  const uint8_t how = Byte();
  const char* text = how & 1 ? nullptr : text_buffer;
  const size_t length = text ? LengthIn(kTextBytes) % (filled + 2) : EdgeSize();
  int32_t* ids = how & 2 ? nullptr : ids_;
  const size_t capacity = ids ? LengthIn(kMaxIds) : EdgeSize();
  size_t n = SIZE_MAX;
  size_t* n_ids = how & 4 ? nullptr : &n;
  ember_status s;
  if (how & 8) {
    ember_tokenize_options options;
    ember_tokenize_options_default(&options);
    const uint32_t struct_sizes[] = {sizeof(options), 0, 4, sizeof(options) + 4,
                                     UINT32_MAX};
    if (how & 16) options.struct_size = Pick(struct_sizes);
    options.add_bos = Pick(kEdgeInts);
    options.parse_special = Pick(kEdgeInts);
    s = ember_tokenize_with_options(session, text, length, how & 32 ? nullptr : &options,
                                    ids, capacity, n_ids);
  } else {
    s = ember_tokenize(session, text, length, Pick(kEdgeInts), ids, capacity, n_ids);
  }
  Check(s, "ember_tokenize");
  if (s == EMBER_OK) {
    if (n > capacity) Fail("ember_tokenize", "more ids than the capacity");
    for (size_t i = 0; i < n; ++i) {
      if (ids[i] < 0 || static_cast<uint32_t>(ids[i]) >= vocab_) {
        Fail("ember_tokenize", "an id outside the vocabulary");
      }
    }
  }
}

void CallProgram::Detokenize() {
  const uint8_t how = Byte();
  const int32_t prev = Token(), token = Token();
  const char* bytes = nullptr;
  size_t length = SIZE_MAX;
  const ember_status s =
      Check(ember_detokenize(how & 1 ? nullptr : model_, prev, token,
                             how & 2 ? nullptr : &bytes, how & 4 ? nullptr : &length),
            "ember_detokenize");
  if (s != EMBER_OK) return;
  if (token < 0 || static_cast<uint32_t>(token) >= vocab_) {
    Fail("ember_detokenize", "accepted an id outside the vocabulary");
  }
  if (length && !bytes) Fail("ember_detokenize", "bytes NULL with a length");
  volatile char sink = 0;
  for (size_t i = 0; i < length; ++i) sink = sink + bytes[i];
}

void CallProgram::Prefill() {
  ember_session* session = SessionArg();
  const size_t filled = FillIds();
  const bool null_ids = Byte() % 8 == 0;
  const size_t n = null_ids ? EdgeSize() : LengthIn(filled);
  const size_t before = ember_session_position(session);
  const ember_status s =
      Check(ember_prefill(session, null_ids ? nullptr : ids_, n), "ember_prefill");
  if (s == EMBER_OK && ember_session_position(session) != before + n) {
    Fail("ember_prefill", "the position did not advance by the ids prefilled");
  }
}

void CallProgram::Decode() {
  ember_session* session = SessionArg();
  const int32_t token = Token();
  const ember_status s = Check(ember_decode(session, token), "ember_decode");
  if (s == EMBER_OK && (token < 0 || static_cast<uint32_t>(token) >= vocab_)) {
    Fail("ember_decode", "accepted an id outside the vocabulary");
  }
}

void CallProgram::Sample() {
  ember_session* session = SessionArg();
  int32_t token = INT32_MIN;
  const bool null_token = Byte() % 8 == 0;
  const ember_status s =
      Check(ember_sample(session, null_token ? nullptr : &token), "ember_sample");
  if (s == EMBER_OK && (token < 0 || static_cast<uint32_t>(token) >= vocab_)) {
    Fail("ember_sample", "a token outside the vocabulary");
  }
}

void CallProgram::Generate() {
  ember_session* session = SessionArg();
  const size_t filled = FillIds();
  const uint8_t how = Byte();
  const int32_t* prompt = how & 1 ? nullptr : ids_;
  const size_t n_prompt = prompt ? LengthIn(filled) : (how & 2 ? EdgeSize() : 0);
  const size_t max_new = how & 4 ? EdgeSize() : Byte() % 8;
  Stopper stopper{vocab_};
  stopper.limit = 1 + Byte() % 16;
  size_t generated = SIZE_MAX;
  const ember_status s = Check(
      ember_generate(session, prompt, n_prompt, max_new, how & 8 ? nullptr : &StopEarly,
                     &stopper, how & 16 ? nullptr : &generated),
      "ember_generate");
  if (s == EMBER_OK && !(how & 16) && generated > max_new) {
    Fail("ember_generate", "more tokens than max_new");
  }
}

void CallProgram::ShiftContext() {
  ember_session* session = SessionArg();
  const size_t position = ember_session_position(session);
  const uint8_t how = Byte();
  const size_t keep = how & 1 ? EdgeSize() : LengthIn(position);
  const size_t discard = how & 2 ? EdgeSize() : LengthIn(position);
  const ember_status s = Check(ember_session_shift_context(session, keep, discard),
                               "ember_session_shift_context");
  if (s == EMBER_OK && ember_session_position(session) != position - discard) {
    Fail("ember_session_shift_context", "the position did not drop by `discard`");
  }
}

void CallProgram::SaveRestore() {
  ember_session* session = SessionArg();
  const size_t needed = ember_session_state_size(session);
  const uint8_t how = Byte();
  void* buffer = how & 1 ? nullptr : state_;
  const size_t capacity = buffer ? LengthIn(needed < kStateBytes ? needed + 1 : kStateBytes)
                                 : EdgeSize();
  size_t size = SIZE_MAX;
  const ember_status saved = Check(
      ember_session_save_state(session, buffer, capacity, how & 2 ? nullptr : &size),
      "ember_session_save_state");
  if (saved == EMBER_RESOURCE_EXHAUSTED && size != needed) {
    Fail("ember_session_save_state", "too small, but the size needed is not the state's");
  }
  if (saved != EMBER_OK) return;
  if (size != needed || size > capacity) {
    Fail("ember_session_save_state", "a size other than ember_session_state_size");
  }
  const size_t position = ember_session_position(session);
  if (how & 4) ember_session_reset(session);
  const size_t flip = how & 8 ? Byte() % (size + 1) : size;
  if (flip < size) state_[flip] ^= 1 + Byte() % 255;  // then it may be refused
  const size_t given = how & 16 ? LengthIn(size < kStateBytes ? size + 1 : size) : size;
  const ember_status restored = Check(
      ember_session_restore_state(session, how & 32 ? nullptr : state_, given),
      "ember_session_restore_state");
  if (flip >= size && given == size && !(how & 32)) {
    // The state just saved, whole and unchanged, restores where it came from.
    if (restored != EMBER_OK) Fail("ember_session_restore_state", "refused its own state");
    if (ember_session_position(session) != position) {
      Fail("ember_session_restore_state", "a position other than the saved one");
    }
  }
}

void CallProgram::SetSampler() {
  ember_sampler_options o;
  ember_sampler_options_default(&o);
  const uint8_t fields = Byte();
  const uint32_t struct_sizes[] = {sizeof(o), offsetof(ember_sampler_options, repeat_penalty),
                                   offsetof(ember_sampler_options, stop), 0, UINT32_MAX};
  if (fields & 1) o.struct_size = Pick(struct_sizes);
  if (fields & 2) {
    o.temperature = Pick(kEdgeFloats);
    o.seed = Byte();
  }
  if (fields & 4) {
    o.top_k = Pick(kEdgeU32);
    o.top_p = Pick(kEdgeFloats);
    o.min_p = Pick(kEdgeFloats);
  }
  if (fields & 8) {
    o.repeat_penalty = Pick(kEdgeFloats);
    o.repeat_last_n = Pick(kEdgeInts);
    o.frequency_penalty = Pick(kEdgeFloats);
    o.presence_penalty = Pick(kEdgeFloats);
  }
  const char* stops[20];
  if (fields & 16) {
    for (const char*& s : stops) s = Pick(kStops);
    o.stop = stops;
    o.n_stop = Byte() % 21;
  } else if (fields & 32) {
    o.stop = nullptr;
    o.n_stop = Pick(kEdgeU32);
  }
  Check(ember_session_set_sampler(SessionArg(), fields & 64 ? nullptr : &o),
        "ember_session_set_sampler");
}

void CallProgram::ArenaBytes() {
  ember_session_options options;
  FillSessionOptions(&options);
  const size_t bytes = ember_arena_bytes(Byte() % 16 ? model_ : nullptr,
                                         Byte() % 8 ? &options : nullptr);
  if (bytes == 0 && ember_last_error()[0] == '\0') {
    Fail("ember_arena_bytes", "0 without a message");
  }
}

}  // namespace ember::fuzz
