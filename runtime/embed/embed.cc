// Embeddings (see embed.h): pooling, truncation and normalization over a session's pass.
#include "runtime/embed/embed.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

namespace ember {

void PoolRows(Pooling pooling, const float* rows, size_t d, size_t first, size_t count,
              size_t total, float* acc, size_t dims) {
  switch (pooling) {
    case Pooling::kMean:
      for (size_t i = 0; i < count; ++i) {
        const float* row = rows + i * d;
        for (size_t j = 0; j < dims; ++j) acc[j] += row[j];
      }
      return;
    case Pooling::kCls:
      if (first == 0) memcpy(acc, rows, dims * sizeof(float));
      return;
    case Pooling::kLast:
      if (first + count == total) {
        memcpy(acc, rows + (count - 1) * d, dims * sizeof(float));
      }
      return;
    case Pooling::kNone:
      return;
  }
}

void FinishEmbedding(Pooling pooling, size_t total, bool normalize, float* v,
                     size_t dims) {
  if (pooling == Pooling::kMean) {
    const float inv = 1.0f / static_cast<float>(total);
    for (size_t j = 0; j < dims; ++j) v[j] *= inv;
  }
  if (!normalize) return;
  double sum = 0.0;  // in double: the squares of a long vector lose no low bits
  for (size_t j = 0; j < dims; ++j) sum += static_cast<double>(v[j]) * v[j];
  if (sum == 0.0) return;
  const float inv = static_cast<float>(1.0 / std::sqrt(sum));
  for (size_t j = 0; j < dims; ++j) v[j] *= inv;
}

namespace {

// The model's dense projections over v (d_model values) in a and b (pooled_width each,
// v in a), each from one to the other; returns the last one's output.
const float* Project(const Model& model, float* a, float* b) {
  const ModelConfig& c = model.config();
  const Weights& w = model.weights();
  size_t in = c.d_model;
  for (size_t p = 0; p < c.dense_dims.size(); ++p) {
    const size_t out = c.dense_dims[p];
    const float* m = w.dense[p]->f32();
    const float* bias = w.dense_bias[p] ? w.dense_bias[p]->f32() : nullptr;
    const bool tanh = (c.dense_flags[p] & ModelConfig::kDenseTanh) != 0;
    for (size_t i = 0; i < out; ++i) {
      double sum = bias ? bias[i] : 0.0;
      const float* row = m + i * in;
      for (size_t j = 0; j < in; ++j) sum += static_cast<double>(row[j]) * a[j];
      b[i] = static_cast<float>(tanh ? std::tanh(sum) : sum);
    }
    std::swap(a, b);
    in = out;
  }
  return a;
}

struct PoolTarget {
  Pooling pooling;
  size_t d, total, dims;
  float* acc;
};

void PoolSink(void* context, const float* rows, size_t first, size_t count) {
  const PoolTarget& t = *static_cast<const PoolTarget*>(context);
  PoolRows(t.pooling, rows, t.d, first, count, t.total, t.acc, t.dims);
}

// The caller's options checked against the model: *dims kept, *normalize or not.
Status ResolveOptions(const ModelConfig& c, const EmbedOptions& options, size_t out_size,
                      bool have_out, size_t* dims, bool* normalize) {
  if (!c.embeds()) {
    return InvalidArgument(
        "the model (%s) puts out logits, not embeddings: its config has no pooling",
        c.architecture);
  }
  const size_t values = c.embedding_values();
  *dims = options.dims ? options.dims : values;
  if (*dims > values) {
    return InvalidArgument("%zu dimensions asked of an embedding of %zu", *dims, values);
  }
  if (!have_out || out_size < *dims) {
    return ResourceExhausted("an embedding of %zu values does not fit in %zu", *dims,
                             have_out ? out_size : 0);
  }
  if (options.normalize < -1 || options.normalize > 1) {
    return InvalidArgument("normalize is -1 (the model's), 0 or 1, not %d",
                           options.normalize);
  }
  *normalize = options.normalize < 0 ? c.normalize : options.normalize == 1;
  return Status::Ok();
}

// Where a text's rows are pooled: out itself (cut to dims) without dense projections,
// else the session's pooled buffer (d_model values), which Finish projects.
float* PoolInto(Session& session, size_t dims, float* out, size_t* width) {
  const ModelConfig& c = session.model().config();
  float* acc = c.dense_dims.empty() ? out : session.buffers().pooled;
  *width = c.dense_dims.empty() ? dims : c.d_model;
  memset(acc, 0, *width * sizeof(float));
  return acc;
}

// The pooled sum of a text of n tokens (in PoolInto's place) to its embedding in
// out[0, dims): averaged, projected where the model has dense layers, cut, normalized.
void Finish(Session& session, size_t n, size_t dims, bool normalize, float* out) {
  const ModelConfig& c = session.model().config();
  if (c.dense_dims.empty()) {
    FinishEmbedding(c.pooling, n, normalize, out, dims);
    return;
  }
  float* pooled = session.buffers().pooled;
  FinishEmbedding(c.pooling, n, false, pooled, c.d_model);
  const float* v = Project(session.model(), pooled, pooled + c.pooled_width());
  memcpy(out, v, dims * sizeof(float));
  FinishEmbedding(Pooling::kNone, n, normalize, out, dims);
}

}  // namespace

Status Embed(Session& session, const int32_t* tokens, const uint8_t* types, size_t n,
             const EmbedOptions& options, float* out, size_t out_size) {
  const ModelConfig& c = session.model().config();
  size_t dims = 0, width = 0;
  bool normalize = false;
  EMBER_RETURN_IF_ERROR(
      ResolveOptions(c, options, out_size, out != nullptr, &dims, &normalize));
  float* acc = PoolInto(session, dims, out, &width);
  PoolTarget target{c.pooling, c.d_model, n, width, acc};
  EMBER_RETURN_IF_ERROR(session.PrefillHidden(tokens, types, n, PoolSink, &target));
  Finish(session, n, dims, normalize, out);
  return Status::Ok();
}

Status EmbedPacked(Session& session, const int32_t* tokens, const size_t* bounds,
                   size_t texts, const EmbedOptions& options, float* out,
                   size_t out_size) {
  const ModelConfig& c = session.model().config();
  size_t dims = 0, width = 0;
  bool normalize = false;
  EMBER_RETURN_IF_ERROR(
      ResolveOptions(c, options, out_size, out != nullptr, &dims, &normalize));
  if (texts == 0 || out_size / dims < texts) {
    return ResourceExhausted("%zu embeddings of %zu values do not fit in %zu", texts,
                             dims, out_size);
  }
  const float* rows = nullptr;
  EMBER_RETURN_IF_ERROR(session.PrefillPacked(tokens, nullptr, bounds, texts, &rows));
  for (size_t t = 0; t < texts; ++t) {
    const size_t n = bounds[t + 1] - bounds[t];
    float* v = out + t * dims;
    float* acc = PoolInto(session, dims, v, &width);
    PoolRows(c.pooling, rows + bounds[t] * c.d_model, c.d_model, 0, n, n, acc, width);
    Finish(session, n, dims, normalize, v);
  }
  return Status::Ok();
}

namespace {

// Whole texts gathered in the session's token buffer, then run as one packed step
// (EmbedPacked) into their rows of the caller's output: EmbedTokensBatch and
// EmbedTextBatch. done() counts the rows written, in order.
class Packer {
 public:
  Packer(Session& session, const EmbedOptions& options, float* out, size_t n_texts,
         size_t* done)
      : session_(session), options_(options), out_(out), n_texts_(n_texts), done_(done) {
    *done_ = 0;
  }
  // The options and the output's room for every text's row (no texts: nothing to do).
  Status Check(size_t out_size) {
    if (n_texts_ == 0) return Status::Ok();
    bool normalize = false;
    EMBER_RETURN_IF_ERROR(ResolveOptions(session_.model().config(), options_, out_size,
                                         out_ != nullptr, &dims_, &normalize));
    if (out_size / dims_ < n_texts_) {
      return ResourceExhausted("%zu embeddings of %zu values do not fit in %zu", n_texts_,
                               dims_, out_size);
    }
    return Status::Ok();
  }
  // A recorded session runs each text alone: its record's rows are one text's.
  bool packable() const { return session_.attention_record().weights == nullptr; }
  // The tokens of one packed step: the session's step and its token buffer bound them.
  size_t capacity() const {
    return std::min(session_.packed_capacity(), session_.plan().token_capacity);
  }
  int32_t* next() const { return session_.buffers().tokens + used(); }  // free room
  size_t used() const { return bounds_[packed_]; }
  bool Fits(size_t n) const {
    return packed_ < kMaxPackedTexts && used() + n <= capacity();
  }
  // The n ids at next() join the step.
  void Add(size_t n) {
    bounds_[packed_ + 1] = bounds_[packed_] + n;
    ++packed_;
  }
  // Runs the texts gathered so far.
  Status Flush() {
    if (packed_ == 0) return Status::Ok();
    EMBER_RETURN_IF_ERROR(EmbedPacked(session_, session_.buffers().tokens, bounds_,
                                      packed_, options_, row(*done_),
                                      (n_texts_ - *done_) * dims_));
    *done_ += packed_;
    packed_ = 0;
    return Status::Ok();
  }
  // Text i, after the gathered ones, runs alone: ids of n tokens through Embed.
  Status Alone(size_t i, const int32_t* ids, size_t n) {
    EMBER_RETURN_IF_ERROR(Flush());
    EMBER_RETURN_IF_ERROR(Embed(session_, ids, nullptr, n, options_, row(i), dims_));
    *done_ = i + 1;
    return Status::Ok();
  }
  float* row(size_t i) const { return out_ + i * dims_; }
  size_t dims() const { return dims_; }

 private:
  Session& session_;
  const EmbedOptions& options_;
  float* out_;
  size_t n_texts_, dims_ = 0;
  size_t* done_;
  size_t bounds_[kMaxPackedTexts + 1] = {0};
  size_t packed_ = 0;
};

}  // namespace

Status EmbedTokensBatch(Session& session, const int32_t* const* ids,
                        const size_t* lengths, size_t n_texts,
                        const EmbedOptions& options, float* out, size_t out_size,
                        size_t* done) {
  Packer packer(session, options, out, n_texts, done);
  EMBER_RETURN_IF_ERROR(packer.Check(out_size));
  for (size_t i = 0; i < n_texts; ++i) {
    const size_t n = lengths[i];
    if (!packer.packable() || n == 0 || n > packer.capacity()) {
      EMBER_RETURN_IF_ERROR(packer.Alone(i, ids[i], n));  // an empty one fails there
      continue;
    }
    if (!packer.Fits(n)) EMBER_RETURN_IF_ERROR(packer.Flush());
    memcpy(packer.next(), ids[i], n * sizeof(int32_t));
    packer.Add(n);
  }
  return packer.Flush();
}

Status PromptText(const Tokenizer& tok, const char* name, std::string_view* text) {
  *text = {};
  if (name == nullptr) {
    if (tok.default_prompt() >= 0) {
      *text = tok.prompt_text(static_cast<size_t>(tok.default_prompt()));
    }
    return Status::Ok();
  }
  if (*name == '\0') return Status::Ok();
  for (size_t i = 0; i < tok.num_prompts(); ++i) {
    if (tok.prompt_name(i) == name) {
      *text = tok.prompt_text(i);
      return Status::Ok();
    }
  }
  return InvalidArgument(
      "the model has no prompt named '%.64s' (%zu named prompts: "
      "`ember inspect` lists them)",
      name, tok.num_prompts());
}

namespace {

// The named prompt, then the text, in the session's prompt_text buffer as one text
// (the text as it is without a prompt).
Status JoinPrompt(Session& session, std::string_view prompt, std::string_view* text) {
  if (prompt.empty()) return Status::Ok();
  char* joined = session.buffers().prompt_text;
  const size_t capacity = session.plan().max_prompt_bytes;
  if (joined == nullptr || text->size() > capacity ||
      prompt.size() > capacity - text->size()) {
    return InvalidArgument(
        "a prompt of %zu bytes and a text of %zu exceed the session's "
        "max_prompt_bytes %zu",
        prompt.size(), text->size(), capacity);
  }
  memcpy(joined, prompt.data(), prompt.size());
  if (!text->empty()) memcpy(joined + prompt.size(), text->data(), text->size());
  *text = std::string_view(joined, prompt.size() + text->size());
  return Status::Ok();
}

EncodeOptions TextEncoding(const Tokenizer& tok) {
  EncodeOptions encode;
  encode.add_bos = tok.add_bos();
  encode.append_end = true;  // the end token the post-processor appends (BERT: [SEP])
  return encode;
}

}  // namespace

Status EmbedText(Session& session, std::string_view text, const EmbedOptions& options,
                 float* out, size_t out_size) {
  std::string_view prompt;
  EMBER_RETURN_IF_ERROR(
      PromptText(session.model().tokenizer(), options.prompt_name, &prompt));
  EMBER_RETURN_IF_ERROR(JoinPrompt(session, prompt, &text));
  const int32_t* ids = nullptr;
  size_t n = 0;
  EMBER_RETURN_IF_ERROR(session.Tokenize(
      text.data(), text.size(), TextEncoding(session.model().tokenizer()), &ids, &n));
  if (n == 0) return InvalidArgument("the text encodes to no tokens");
  return Embed(session, ids, nullptr, n, options, out, out_size);
}

Status EmbedTextBatch(Session& session, const char* const* texts, const size_t* lengths,
                      size_t n_texts, const EmbedOptions& options, float* out,
                      size_t out_size, size_t* done) {
  const Tokenizer& tok = session.model().tokenizer();
  Packer packer(session, options, out, n_texts, done);
  EMBER_RETURN_IF_ERROR(packer.Check(out_size));
  std::string_view prompt;
  EMBER_RETURN_IF_ERROR(PromptText(tok, options.prompt_name, &prompt));
  const size_t room = session.plan().token_capacity;
  const EncodeOptions encode = TextEncoding(tok);
  for (size_t i = 0; i < n_texts; ++i) {
    if (texts[i] == nullptr && lengths[i] != 0) {
      EMBER_RETURN_IF_ERROR(packer.Flush());  // the texts before it are written
      return InvalidArgument("the text is NULL");
    }
    const std::string_view original(texts[i] ? texts[i] : "", lengths[i]);
    std::string_view text = original;
    Status s = JoinPrompt(session, prompt, &text);
    if (!packer.packable() || !s.ok() || tok.EncodeCapacity(text.size()) > room) {
      // Alone, as EmbedText runs it (or fails it: too long for the session).
      EMBER_RETURN_IF_ERROR(packer.Flush());
      EMBER_RETURN_IF_ERROR(
          EmbedText(session, original, options, packer.row(i), packer.dims()));
      *done = i + 1;
      continue;
    }
    if (tok.EncodeCapacity(text.size()) > room - packer.used()) {
      EMBER_RETURN_IF_ERROR(packer.Flush());
    }
    size_t n = 0;
    s = tok.Encode(text, encode, packer.next(), room - packer.used(), &n);
    if (s.ok() && n == 0) s = InvalidArgument("the text encodes to no tokens");
    if (!s.ok()) {
      EMBER_RETURN_IF_ERROR(packer.Flush());
      return s;
    }
    if (n > packer.capacity() || !packer.Fits(n)) {  // its ids to the buffer's start
      const int32_t* ids = packer.next();
      EMBER_RETURN_IF_ERROR(packer.Flush());
      memmove(packer.next(), ids, n * sizeof(int32_t));
    }
    if (n > packer.capacity()) {  // longer than a packed step: its own steps
      EMBER_RETURN_IF_ERROR(packer.Alone(i, packer.next(), n));
      continue;
    }
    packer.Add(n);
  }
  return packer.Flush();
}

Status Score(Session& session, const int32_t* tokens, const uint8_t* types, size_t n,
             float* scores, size_t scores_size) {
  const ModelConfig& c = session.model().config();
  const Weights& w = session.model().weights();
  if (c.labels == 0) {
    return InvalidArgument("the model (%s) has no classification head to score with",
                           c.architecture);
  }
  if (scores == nullptr || scores_size < c.labels) {
    return ResourceExhausted("%u scores do not fit in %zu", c.labels,
                             scores ? scores_size : 0);
  }
  const size_t d = c.d_model;
  float* pooled = session.buffers().pooled;
  float* hidden = pooled + d;
  memset(pooled, 0, d * sizeof(float));
  PoolTarget target{c.pooling, d, n, d, pooled};
  EMBER_RETURN_IF_ERROR(session.PrefillHidden(tokens, types, n, PoolSink, &target));
  FinishEmbedding(c.pooling, n, c.normalize, pooled, d);
  const float* v = pooled;
  if (w.cls_pool) {  // BERT's pooler: tanh(W v + b)
    const float* m = w.cls_pool->f32();
    const float* bias = w.cls_pool_bias->f32();
    for (size_t i = 0; i < d; ++i) {
      double sum = bias[i];
      for (size_t j = 0; j < d; ++j) sum += static_cast<double>(m[i * d + j]) * v[j];
      hidden[i] = static_cast<float>(std::tanh(sum));
    }
    v = hidden;
  }
  const float* m = w.cls_out->f32();
  const float* bias = w.cls_out_bias->f32();
  for (size_t i = 0; i < c.labels; ++i) {
    double sum = bias[i];
    for (size_t j = 0; j < d; ++j) sum += static_cast<double>(m[i * d + j]) * v[j];
    scores[i] = static_cast<float>(sum);
  }
  return Status::Ok();
}

namespace {

// A reranker's prompt: the tokenizer's pair_format with {query}, {document} and
// {instruction} replaced, written into the session's prompt_text buffer, then encoded
// whole with control tokens as written (as Qwen3-Reranker's code encodes it).
Status EncodeFormatted(Session& session, std::string_view query, std::string_view doc,
                       std::string_view instruction, const int32_t** ids, size_t* n) {
  const Tokenizer& tok = session.model().tokenizer();
  const std::string_view format = tok.pair_format();
  if (instruction.empty()) instruction = tok.pair_instruction();
  char* text = session.buffers().prompt_text;
  const size_t capacity = session.plan().max_prompt_bytes;
  size_t used = 0;
  const auto put = [&](std::string_view part) {
    if (part.size() > capacity - used) return false;
    memcpy(text + used, part.data(), part.size());
    used += part.size();
    return true;
  };
  static const std::string_view kQuery = "{query}", kDoc = "{document}",
                                kInstruction = "{instruction}";
  bool fits = text != nullptr;  // a model without a head plans no room for it
  for (size_t i = 0; fits && i < format.size();) {
    const size_t open = format.find('{', i);
    if (open == std::string_view::npos) {
      fits = put(format.substr(i));
      break;
    }
    fits = put(format.substr(i, open - i));
    const std::string_view rest = format.substr(open);
    std::string_view value = "{";
    size_t skip = 1;
    if (rest.substr(0, kQuery.size()) == kQuery) {
      value = query, skip = kQuery.size();
    } else if (rest.substr(0, kDoc.size()) == kDoc) {
      value = doc, skip = kDoc.size();
    } else if (rest.substr(0, kInstruction.size()) == kInstruction) {
      value = instruction, skip = kInstruction.size();
    }
    fits = fits && put(value);
    i = open + skip;
  }
  if (!fits) {
    return InvalidArgument(
        "the reranker's prompt for a query of %zu bytes and a document "
        "of %zu exceeds the session's max_prompt_bytes %zu",
        query.size(), doc.size(), capacity);
  }
  EncodeOptions options;
  options.add_bos = tok.add_bos();
  options.parse_special = true;
  EMBER_RETURN_IF_ERROR(tok.Encode(std::string_view(text, used), options,
                                   session.buffers().tokens,
                                   session.plan().token_capacity, n));
  if (*n > session.plan().max_context) {
    return OutOfRange(
        "the reranker's prompt encodes to %zu tokens; the session holds %zu", *n,
        session.plan().max_context);
  }
  *ids = session.buffers().tokens;
  return Status::Ok();
}

}  // namespace

Status EncodePair(Session& session, std::string_view a, std::string_view b,
                  const int32_t** ids, const uint8_t** types_out, size_t* n,
                  std::string_view instruction) {
  const Tokenizer& tok = session.model().tokenizer();
  if (!tok.pair_format().empty()) {
    *types_out = nullptr;
    return EncodeFormatted(session, a, b, instruction, ids, n);
  }
  if (!instruction.empty()) {
    return InvalidArgument(
        "the model's pair has no instruction (only a reranker with a "
        "prompt, as Qwen3-Reranker, takes one)");
  }
  uint8_t* types = session.buffers().types;
  const size_t types_size = session.plan().max_context;
  const size_t capacity = session.plan().token_capacity;
  if (b.size() > session.plan().max_prompt_bytes ||
      a.size() > session.plan().max_prompt_bytes - b.size()) {
    return InvalidArgument("a pair of %zu and %zu bytes exceeds the session's "
                           "max_prompt_bytes %zu", a.size(), b.size(),
                           session.plan().max_prompt_bytes);
  }
  int32_t* buffer = session.buffers().tokens;
  EncodeOptions first;
  first.add_bos = tok.add_bos();
  size_t a_n = 0, b_n = 0;
  EMBER_RETURN_IF_ERROR(tok.Encode(a, first, buffer, capacity, &a_n));
  // b after a's ids (and an EOS after b): in the room left, which must be b's work room.
  const size_t room = capacity - a_n;
  if (room < tok.EncodeCapacity(b.size()) + 1) {
    return ResourceExhausted("the pair's second text needs more token room than the "
                             "session's %zu ids", capacity);
  }
  EMBER_RETURN_IF_ERROR(tok.Encode(b, EncodeOptions{}, buffer + a_n, room - 1, &b_n));
  size_t total = a_n + b_n;
  if (tok.eos_id() >= 0) buffer[total++] = tok.eos_id();
  if (total > types_size) {
    return OutOfRange("the pair encodes to %zu tokens; the session holds %zu", total,
                      types_size);
  }
  memset(types, 0, a_n);
  memset(types + a_n, 1, total - a_n);
  *ids = buffer;
  // A model without segment embeddings reads no types (Hugging Face's ignore them too).
  *types_out = session.model().config().token_types > 0 ? types : nullptr;
  *n = total;
  return Status::Ok();
}

}  // namespace ember
