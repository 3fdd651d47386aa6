// The C API sequence fuzzer's interpreter (c_api_fuzzer.cc): reads a program of calls
// from the input and makes them on one model, checking what each promises.
#ifndef EMBER_TESTS_FUZZ_C_API_FUZZ_CALLS_H_
#define EMBER_TESTS_FUZZ_C_API_FUZZ_CALLS_H_

#include <cstddef>
#include <cstdint>

#include "runtime/ember.h"

namespace ember::fuzz {

// Shared by the calls (c_api_fuzz_calls.cc, c_api_fuzz_chat.cc): buffers the harness
// owns, edge values, and the checks.
constexpr size_t kTextBytes = 256, kRenderBytes = size_t{1} << 14, kMaxMessages = 8;
extern char text_buffer[kTextBytes];
extern char render_buffer[kRenderBytes];
constexpr size_t kNumEdgeInts = 7, kNumEdgeU32 = 10, kNumRoles = 7;
extern const int32_t kEdgeInts[kNumEdgeInts];  // INT32_MIN, -2, ... INT32_MAX
extern const uint32_t kEdgeU32[kNumEdgeU32];   // 0, 1, ... UINT32_MAX
extern const char* const kRoles[kNumRoles];    // the four, "", invalid UTF-8, NULL

[[noreturn]] void Fail(const char* call, const char* what);
// A failure must be a known status with a message; EMBER_INTERNAL is ember's own bug.
ember_status Check(ember_status s, const char* call);

// A token callback that stops generation after `limit` tokens (at most 16), so that
// max_new SIZE_MAX with a context shift still ends; it checks each token and its bytes.
struct Stopper {
  uint32_t vocab;
  size_t seen = 0, limit = 1;
};
int StopEarly(void* user, int32_t token, const char* bytes, size_t length);

// The opcodes: the input's next byte modulo kNumCalls picks the call.
enum Call : uint8_t {
  kCreateSession,
  kFreeSession,
  kTokenize,
  kDetokenize,
  kPrefill,
  kDecode,
  kSample,
  kGenerate,
  kShiftContext,
  kSaveRestore,
  kSetSampler,
  kResetSession,
  kChatCreate,
  kChatAdd,
  kChatGenerate,
  kChatOther,  // reset, stats, free
  kRender,
  kArenaBytes,
  kNumCalls
};

class CallProgram {
 public:
  CallProgram(ember_model* model, const uint8_t* data, size_t size)
      : model_(model), data_(data), size_(size) {}
  ~CallProgram();
  CallProgram(const CallProgram&) = delete;
  CallProgram& operator=(const CallProgram&) = delete;

  // Runs the calls until the input ends (at most kMaxCalls).
  void Run();

 private:
  static constexpr int kMaxCalls = 64;

  // The input, read as the calls need it (zeros past its end).
  uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  template <typename T, size_t N>
  T Pick(const T (&values)[N]) {
    return values[Byte() % N];
  }
  size_t EdgeSize();              // 0, 1, SIZE_MAX, SIZE_MAX / 2 + 1, ...: not a buffer
  size_t LengthIn(size_t owned);  // a length inside a buffer of `owned` elements
  int32_t Token();                // an id around the vocabulary's edges, or inside it
  size_t FillText();              // fills text_ from the input; its length
  size_t FillIds();               // fills ids_ with Token()s; how many

  void CreateSession();
  void FreeSession();
  void Tokenize();
  void Detokenize();
  void Prefill();
  void Decode();
  void Sample();
  void Generate();
  void ShiftContext();
  void SaveRestore();
  void SetSampler();
  void ChatCreate();
  void ChatAdd();
  void ChatGenerate();
  void ChatOther();
  void Render();
  void ArenaBytes();

  // The session for a call: the program's, or NULL (one call in eight, or when there is
  // none: the call must refuse it).
  ember_session* SessionArg();
  void FillSessionOptions(ember_session_options* o);

  ember_model* model_;
  const uint8_t* data_;
  size_t size_, at_ = 0;
  ember_session* session_ = nullptr;
  ember_chat* chat_ = nullptr;
  uint8_t* arena_ = nullptr;  // the caller arena session_ uses, if any
  uint32_t vocab_ = 0;
};

}  // namespace ember::fuzz

#endif  // EMBER_TESTS_FUZZ_C_API_FUZZ_CALLS_H_
