// ember.hpp: a thin C++ layer over the C API (ember.h): RAII handles and exceptions-free
// error reporting through ember_status. Header-only.
#ifndef EMBER_EMBER_HPP_
#define EMBER_EMBER_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember.h"

namespace ember::cpp {

// A loaded model; move-only.
class Model {
 public:
  Model() = default;
  ember_status Open(const char* path) { return Reset(ember_model_open(path, &handle_)); }
  ember_status FromMemory(const void* data, size_t size) {
    return Reset(ember_model_from_memory(data, size, &handle_));
  }
  ~Model() { ember_model_free(handle_); }
  Model(Model&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  Model& operator=(Model&& o) noexcept {
    std::swap(handle_, o.handle_);
    return *this;
  }

  const ember_model* get() const { return handle_; }
  uint32_t vocab_size() const { return ember_model_vocab_size(handle_); }
  size_t ArenaBytes(const ember_session_options* options = nullptr) const {
    return ember_arena_bytes(handle_, options);
  }
  // The configuration and parameter counts (ember_info.h), struct_size set here.
  ember_status Info(ember_model_info* info) const {
    info->struct_size = sizeof(*info);
    return ember_model_get_info(handle_, info);
  }
  // The arena bytes `gbnf` takes in a session of this model (ember_grammar_bytes: what
  // ember_session_options.grammar_bytes must be at least); 0 when it is refused.
  size_t GrammarBytes(std::string_view gbnf, const char* root = nullptr) const {
    ember_grammar_options options;
    ember_grammar_options_default(&options);
    options.root = root;
    size_t bytes = 0;
    if (ember_grammar_bytes(handle_, gbnf.data(), gbnf.size(), &options, &bytes) != EMBER_OK) {
      return 0;
    }
    return bytes;
  }
  // The same for a JSON Schema's grammar (ember_json_schema_bytes); 0 when refused.
  size_t JsonSchemaBytes(std::string_view schema) const {
    size_t bytes = 0;
    if (ember_json_schema_bytes(handle_, schema.data(), schema.size(), &bytes) != EMBER_OK) {
      return 0;
    }
    return bytes;
  }
  // The text of `token` after `prev` (-1 at the start).
  std::string_view Detokenize(int32_t prev, int32_t token) const {
    const char* bytes = nullptr;
    size_t length = 0;
    if (ember_detokenize(handle_, prev, token, &bytes, &length) != EMBER_OK) return {};
    return {bytes, length};
  }

 private:
  ember_status Reset(ember_status status) {
    if (status != EMBER_OK) handle_ = nullptr;
    return status;
  }
  ember_model* handle_ = nullptr;
};

// A session over a Model that outlives it; move-only.
class Session {
 public:
  Session() = default;
  ember_status Create(const Model& model, const ember_session_options* options = nullptr,
                      ember_threadpool* pool = nullptr, void* arena = nullptr,
                      size_t arena_bytes = 0) {
    ember_session_free(handle_);
    handle_ = nullptr;
    return ember_session_create(model.get(), options, pool, arena, arena_bytes, &handle_);
  }
  ~Session() { ember_session_free(handle_); }
  Session(Session&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  Session& operator=(Session&& o) noexcept {
    std::swap(handle_, o.handle_);
    return *this;
  }

  ember_session* get() { return handle_; }
  ember_status Tokenize(std::string_view text, bool add_bos, std::vector<int32_t>* ids) {
    ember_tokenize_options options;
    ember_tokenize_options_default(&options);
    options.add_bos = add_bos ? 1 : 0;
    return Tokenize(text, options, ids);
  }
  // With options (parse_special for a rendered chat template).
  ember_status Tokenize(std::string_view text, const ember_tokenize_options& options,
                        std::vector<int32_t>* ids) {
    ids->resize(text.size() + 2);
    size_t n = 0;
    ember_status s = ember_tokenize_with_options(handle_, text.data(), text.size(),
                                                 &options, ids->data(), ids->size(), &n);
    if (s == EMBER_RESOURCE_EXHAUSTED && n > ids->size()) {  // NFC can lengthen text
      ids->resize(n);
      s = ember_tokenize_with_options(handle_, text.data(), text.size(), &options,
                                      ids->data(), ids->size(), &n);
    }
    ids->resize(s == EMBER_OK ? n : 0);
    return s;
  }
  ember_status Prefill(const std::vector<int32_t>& ids) {
    return ember_prefill(handle_, ids.data(), ids.size());
  }
  ember_status Decode(int32_t token) { return ember_decode(handle_, token); }
  const float* logits() const { return ember_logits(handle_); }
  // The recorded attention weights (options.record_attention) and their shape in *info;
  // null when the session records none.
  const float* Attention(ember_attention_info* info) const {
    info->struct_size = sizeof(*info);
    return ember_attention(handle_, info);
  }
  ember_status SetSampler(const ember_sampler_options& options) {
    return ember_session_set_sampler(handle_, &options);
  }
  // A GBNF grammar every Generate then follows (root: its first rule's name, "root"
  // when null); an empty view (null data) removes it.
  ember_status SetGrammar(std::string_view gbnf, const char* root = nullptr) {
    ember_grammar_options options;
    ember_grammar_options_default(&options);
    options.root = root;
    return ember_session_set_grammar(handle_, gbnf.data(), gbnf.size(), &options);
  }
  // A JSON Schema's grammar (ember_session_set_json_schema); an empty view (null data)
  // removes it.
  ember_status SetJsonSchema(std::string_view schema) {
    return ember_session_set_json_schema(handle_, schema.data(), schema.size());
  }
  bool GrammarComplete() const { return ember_session_grammar_complete(handle_) != 0; }
  ember_status Sample(int32_t* token) { return ember_sample(handle_, token); }
  // Generates up to max_new tokens after `prompt`, calling on_token(id, text) for each;
  // on_token returns false to stop.
  template <typename F>
  ember_status Generate(const std::vector<int32_t>& prompt, size_t max_new, F&& on_token,
                        size_t* n_generated = nullptr) {
    using Callback = std::remove_reference_t<F>;
    auto trampoline = [](void* user, int32_t id, const char* bytes, size_t length) -> int {
      return (*static_cast<Callback*>(user))(id, std::string_view(bytes, length)) ? 1 : 0;
    };
    return ember_generate(handle_, prompt.data(), prompt.size(), max_new, trampoline,
                          &on_token, n_generated);
  }
  ember_status ShiftContext(size_t keep, size_t discard) {
    return ember_session_shift_context(handle_, keep, discard);
  }
  void Reset() { ember_session_reset(handle_); }
  size_t position() const { return ember_session_position(handle_); }

 private:
  ember_session* handle_ = nullptr;
};

inline std::string LastError() { return ember_last_error(); }

}  // namespace ember::cpp

#endif  // EMBER_EMBER_HPP_
