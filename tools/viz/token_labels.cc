// Token labels (see token_labels.h).
#include "tools/viz/token_labels.h"

#include <cstdio>

#include "runtime/text/utf8.h"

namespace ember::tools {
namespace {

std::string Hex(uint8_t byte) {
  char buf[8];
  snprintf(buf, sizeof(buf), "<%02X>", byte);
  return buf;
}

// One character as it shows in a label: newline and tab as symbols, other control
// characters as hex, the rest (spaces included, trimmed later) as they are.
void AppendVisible(uint32_t cp, std::string_view bytes, std::string* out) {
  if (cp == '\n') {
    *out += "\u21B5";  // ↵
  } else if (cp == '\t') {
    *out += "\u21E5";  // ⇥
  } else if (cp < 0x20 || cp == 0x7F) {
    *out += Hex(static_cast<uint8_t>(cp));
  } else {
    out->append(bytes);
  }
}

// Spaces trimmed at both ends; a label of spaces only shows them as "␣".
std::string Finish(const std::string& label) {
  const size_t begin = label.find_first_not_of(' ');
  if (begin == std::string::npos) {
    std::string out;
    for (size_t i = 0; i < label.size(); ++i) out += "\u2423";  // ␣
    return out;
  }
  const size_t end = label.find_last_not_of(' ');
  return label.substr(begin, end - begin + 1);
}

// A piece's own bytes made visible (for tokens that add no text, as a SentencePiece
// space right after BOS, whose dummy prefix Decode drops).
std::string VisiblePiece(std::string_view piece) {
  std::string out;
  uint32_t cp;
  for (size_t pos = 0; pos < piece.size();) {
    const size_t len = DecodeUtf8(piece, pos, &cp);
    if (len == 0) {
      out += Hex(static_cast<uint8_t>(piece[pos++]));
      continue;
    }
    AppendVisible(cp, piece.substr(pos, len), &out);
    pos += len;
  }
  return Finish(out);
}

}  // namespace

std::vector<std::string> TokenLabels(const Tokenizer& tokenizer,
                                     const std::vector<int32_t>& ids,
                                     size_t max_columns) {
  const size_t n = ids.size();
  std::vector<std::string> labels(n);
  std::vector<bool> named(n, false);  // labelled already (special or out of range)
  // The text the tokens spell, and which token each byte came from.
  std::string text;
  std::vector<size_t> owner;
  int32_t prev = -1;
  for (size_t i = 0; i < n; ++i) {
    const int32_t id = ids[i];
    if (id < 0 || static_cast<uint32_t>(id) >= tokenizer.vocab_size()) {
      labels[i] = "[" + std::to_string(id) + "]";
      named[i] = true;
      continue;
    }
    const TokenType type = tokenizer.type(static_cast<uint32_t>(id));
    if (type == TokenType::kControl || type == TokenType::kUnknown) {
      std::string piece(tokenizer.piece(static_cast<uint32_t>(id)));
      const size_t begin = piece.find_first_not_of(" \n\t\r");
      labels[i] =
          begin == std::string::npos
              ? "[" + std::to_string(id) + "]"
              : piece.substr(begin, piece.find_last_not_of(" \n\t\r") - begin + 1);
      named[i] = true;
    } else {
      const std::string_view bytes = tokenizer.Decode(prev, id);
      text.append(bytes);
      owner.insert(owner.end(), bytes.size(), i);
    }
    prev = id;
  }

  uint32_t cp;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = DecodeUtf8(text, pos, &cp);
    if (len == 0) {
      labels[owner[pos]] += Hex(static_cast<uint8_t>(text[pos]));
      ++pos;
      continue;
    }
    const std::string_view ch(text.data() + pos, len);
    const size_t first = owner[pos], last = owner[pos + len - 1];
    if (first == last) {
      AppendVisible(cp, ch, &labels[first]);
    } else {
      // Owners are nondecreasing along the text: count the distinct ones, then number
      // each token's share of the character.
      size_t shares = 1;
      for (size_t b = pos + 1; b < pos + len; ++b) shares += owner[b] != owner[b - 1];
      size_t share = 1;
      for (size_t b = pos; b < pos + len; ++b) {
        if (b > pos && owner[b] == owner[b - 1]) continue;
        std::string& label = labels[owner[b]];
        AppendVisible(cp, ch, &label);
        label += std::to_string(share++) + "/" + std::to_string(shares);
      }
    }
    pos += len;
  }

  for (size_t i = 0; i < n; ++i) {
    if (!named[i]) {
      labels[i] = labels[i].empty()
                      ? VisiblePiece(tokenizer.piece(static_cast<uint32_t>(ids[i])))
                      : Finish(labels[i]);
      if (labels[i].empty()) labels[i] = "[" + std::to_string(ids[i]) + "]";
    }
    labels[i] = CutToColumns(labels[i], max_columns);
  }
  return labels;
}

}  // namespace ember::tools
