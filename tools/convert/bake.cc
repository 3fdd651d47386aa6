// Baked prompts (see bake.h).
#include "tools/convert/bake.h"

#include <cstring>
#include <vector>

#include "runtime/chat/chat.h"
#include "runtime/chat/prompt_state.h"
#include "runtime/session.h"
#include "runtime/pool/thread_pool.h"

namespace ember::tools {

Status SpecFromModel(const Model& model, ModelSpec* spec) {
  *spec = ModelSpec();
  spec->config = model.config();
  if (model.vision()) spec->vision = *model.vision();
  spec->description = model.description();
  const Tokenizer& tok = model.tokenizer();
  const TokenizerTables& t = tok.tables();
  TokenizerSpec& out = spec->tokenizer;
  out.kind = t.kind;
  for (uint32_t i = 0; i < t.vocab_size; ++i) {
    out.pieces.emplace_back(tok.piece(i));
    out.types.push_back(tok.type(i));
    if (t.scores) out.scores.push_back(t.scores[i]);
  }
  for (size_t i = 0; i < t.num_merges; ++i) {
    const uint32_t* m = t.merges + 4 * i;
    out.merges.push_back({m[0], m[1], m[2], m[3]});
  }
  out.bos_id = t.bos_id;
  out.eos_id = t.eos_id;
  out.unk_id = t.unk_id;
  out.add_bos = t.add_bos;
  out.add_dummy_prefix = t.add_dummy_prefix;
  out.stop_ids.assign(t.stop_ids, t.stop_ids + t.num_stop_ids);
  if (!t.has_stop_ids) {  // an older file: EOS and BOS, as the runtime reads it
    for (int32_t id : {t.eos_id, t.bos_id}) {
      if (id >= 0) out.stop_ids.push_back(id);
    }
  }
  out.pre_tokenizer = t.pre_tokenizer;
  out.normalizer = t.normalizer;
  out.ignore_merges = t.ignore_merges;
  out.metaspace_is_space = t.metaspace_is_space;
  out.dummy_prefix = t.dummy_prefix;
  for (size_t i = 0; i < t.num_added; ++i) {
    const uint32_t begin = t.added_offsets[i], end = t.added_offsets[i + 1];
    out.added.push_back(
        {t.added_ids[i],
         std::string(reinterpret_cast<const char*>(t.added_text) + begin, end - begin),
         t.added_flags[i]});
  }
  out.chat_template = std::string(tok.chat_template());
  if (!model.chat_template().empty()) {
    const ChatProgramTables& p = model.chat_template().tables();
    ChatProgramSpec& c = out.chat_program;
    c.code.assign(p.code, p.code + p.code_size);
    for (size_t i = 0; i < p.num_strings; ++i) {
      c.strings.emplace_back(
          reinterpret_cast<const char*>(p.string_bytes) + p.string_offsets[i],
          p.string_offsets[i + 1] - p.string_offsets[i]);
    }
    c.floats.assign(p.floats, p.floats + p.num_floats);
    c.num_slots = p.num_slots;
    c.max_stack = p.max_stack;
    c.max_loops = p.max_loops;
    c.bos_token = std::string(p.bos_token);
    c.eos_token = std::string(p.eos_token);
    c.unk_token = std::string(p.unk_token);
    c.pad_token = std::string(p.pad_token);
    c.end_of_turn_ids.assign(p.end_of_turn_ids,
                             p.end_of_turn_ids + p.num_end_of_turn_ids);
  }
  for (const Tensor& t : model.tensors()) {
    TensorSpec ts;
    ts.name = t.name;
    ts.shape.assign(t.shape, t.shape + t.n_dims);
    ts.dtype = t.dtype;
    ts.encoded.assign(t.data, t.data + t.size_bytes);
    spec->tensors.push_back(std::move(ts));
  }
  const BakedPromptView& b = model.baked_prompt();
  if (b.state) {
    spec->baked_prompt.text = std::string(b.text);
    spec->baked_prompt.tokens.assign(b.tokens, b.tokens + b.num_tokens);
    spec->baked_prompt.state.assign(b.state, b.state + b.state_bytes);
  }
  return Status::Ok();
}

Status BakePrompt(const Model& model, const BakeRequest& request,
                  BakedPromptSpec* baked) {
  const Tokenizer& tok = model.tokenizer();
  std::vector<int32_t> tokens;
  if (request.chat_system) {
    const ChatTemplate& chat = model.chat_template();
    if (chat.empty())
      return NotFound("the model has no compiled chat template to render");
    const ChatMessage system{"system", request.text};
    ChatTemplateOptions options;
    options.add_generation_prompt = false;
    std::vector<char> buffer(ChatRenderBytes(request.text.size()));  // as a chat's
    size_t length = 0;
    EMBER_RETURN_IF_ERROR(
        chat.Render(&system, 1, options, buffer.data(), buffer.size(), &length));
    // As a chat tokenizes it (runtime/chat/chat.h): special tokens parsed, no BOS added.
    tokens.resize(tok.EncodeCapacity(length));
    EncodeOptions encode;
    encode.parse_special = true;
    size_t n = 0;
    EMBER_RETURN_IF_ERROR(tok.Encode(std::string_view(buffer.data(), length), encode,
                                     tokens.data(), tokens.size(), &n));
    tokens.resize(n);
  } else {
    tokens.resize(tok.EncodeCapacity(request.text.size()));
    size_t n = 0;
    EMBER_RETURN_IF_ERROR(
        tok.Encode(request.text, tok.add_bos(), tokens.data(), tokens.size(), &n));
    tokens.resize(n);
  }
  if (tokens.empty()) return InvalidArgument("the prompt to bake has no tokens");
  if (tokens.size() >= model.config().max_context) {
    return InvalidArgument("the prompt to bake is %zu tokens: the model's context is %u",
                           tokens.size(), model.config().max_context);
  }
  auto pool = ThreadPool::Create(request.threads);
  if (!pool.ok()) return pool.status();
  SessionOptions options;
  options.max_context = static_cast<uint32_t>(tokens.size());
  // One step for the whole prompt: no sliding layer keeps a ring, so the state holds
  // every position and restores into a session of any context and ring
  // (prompt_state.h); an f32 cache, which sessions of another KV type refuse.
  options.max_batch = static_cast<uint32_t>(tokens.size());
  options.baked_prompt = false;
  auto session = Session::Create(model, options, pool->get());
  if (!session.ok()) return session.status();
  EMBER_RETURN_IF_ERROR(session->Prefill(tokens.data(), tokens.size()));
  baked->text = request.text;
  baked->tokens = tokens;
  baked->state.resize(PromptStateBytes(*session));
  size_t bytes = 0;
  return SavePromptState(*session, nullptr, baked->state.data(), baked->state.size(),
                         &bytes);
}

Status BakeSpec(const BakeRequest& request, ModelSpec* spec) {
  spec->baked_prompt = BakedPromptSpec();
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(SerializeModel(*spec, &bytes));
  // At an address the loader takes (16-byte aligned; a vector is only malloc-aligned).
  std::vector<uint8_t> storage(bytes.size() + 16);
  uint8_t* data =
      storage.data() + (16 - reinterpret_cast<uintptr_t>(storage.data()) % 16) % 16;
  memcpy(data, bytes.data(), bytes.size());
  bytes.clear();
  bytes.shrink_to_fit();
  auto model = Model::FromMemory(data, storage.size() - (data - storage.data()));
  if (!model.ok()) return model.status();
  return BakePrompt(**model, request, &spec->baked_prompt);
}

}  // namespace ember::tools
