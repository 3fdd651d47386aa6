// DEFLATE decoding into caller memory (inflate.h): canonical Huffman codes decoded
// through a 9-bit table, with a walk of the code lengths for longer codes.
#include "runtime/vision/inflate.h"

#include <cstring>

namespace ember {
namespace {

constexpr int kMaxBits = 15;
constexpr int kFastBits = 9;

// Bits from the source, least significant first.
class BitReader {
 public:
  BitReader(InflateSource source, void* context) : source_(source), context_(context) {}

  // Up to 24 bits in the buffer, when the input has them.
  void Fill() {
    while (count_ <= 24) {
      if (size_ == 0 && !Next()) return;
      bits_ |= static_cast<uint32_t>(*data_++) << count_;
      --size_;
      count_ += 8;
    }
  }
  // n <= 24 bits; false when the input ends first.
  bool Take(int n, uint32_t* value) {
    if (count_ < n) Fill();
    if (count_ < n) return false;
    *value = bits_ & ((1u << n) - 1);
    bits_ >>= n;
    count_ -= n;
    return true;
  }
  uint32_t Peek() const { return bits_; }
  int count() const { return count_; }
  void Drop(int n) {
    bits_ >>= n;
    count_ -= n;
  }
  void AlignToByte() { Drop(count_ % 8); }
  // A stored block's bytes: whole bytes left in the buffer first.
  bool Byte(uint8_t* b) {
    uint32_t v = 0;
    if (!Take(8, &v)) return false;
    *b = static_cast<uint8_t>(v);
    return true;
  }

 private:
  bool Next() {
    while (source_(context_, &data_, &size_)) {
      if (size_ > 0) return true;
    }
    size_ = 0;
    return false;
  }

  InflateSource source_;
  void* context_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  uint32_t bits_ = 0;
  int count_ = 0;
};

// A canonical Huffman code: the fast table for codes up to kFastBits (entry: symbol << 4
// | length, 0 for none), and counts and symbols by length for the rest.
struct Huffman {
  uint16_t fast[1 << kFastBits];
  uint16_t count[kMaxBits + 1];
  uint16_t symbols[288];
};

uint32_t Reverse(uint32_t code, int bits) {
  uint32_t r = 0;
  for (int i = 0; i < bits; ++i) r = (r << 1) | ((code >> i) & 1);
  return r;
}

// Builds the code from lengths[0, n); false when the lengths over-subscribe the code
// space. An incomplete code is allowed (a lone distance code); a missing code read later
// is an error.
bool Build(const uint8_t* lengths, int n, Huffman* h) {
  std::memset(h->count, 0, sizeof(h->count));
  std::memset(h->fast, 0, sizeof(h->fast));
  for (int i = 0; i < n; ++i) ++h->count[lengths[i]];
  h->count[0] = 0;
  int left = 1;
  for (int len = 1; len <= kMaxBits; ++len) {
    left = left * 2 - h->count[len];
    if (left < 0) return false;
  }
  uint16_t offsets[kMaxBits + 2];
  offsets[1] = 0;
  for (int len = 1; len <= kMaxBits; ++len)
    offsets[len + 1] = offsets[len] + h->count[len];
  for (int i = 0; i < n; ++i) {
    if (lengths[i] != 0) h->symbols[offsets[lengths[i]]++] = static_cast<uint16_t>(i);
  }
  // The fast table: each short code, bit-reversed (DEFLATE sends codes MSB first).
  uint32_t code = 0;
  int index = 0;
  for (int len = 1; len <= kFastBits; ++len) {
    for (int k = 0; k < h->count[len]; ++k, ++index, ++code) {
      const uint32_t reversed = Reverse(code, len);
      for (uint32_t fill = reversed; fill < (1u << kFastBits); fill += 1u << len) {
        h->fast[fill] = static_cast<uint16_t>((h->symbols[index] << 4) | len);
      }
    }
    code <<= 1;
  }
  return true;
}

// The next symbol, or -1 (no such code, or the input ended).
int Decode(BitReader* in, const Huffman& h) {
  in->Fill();
  const uint16_t entry = h.fast[in->Peek() & ((1u << kFastBits) - 1)];
  const int len = entry & 15;
  if (entry != 0 && len <= in->count()) {
    in->Drop(len);
    return entry >> 4;
  }
  // Longer codes (or few bits left): canonical decoding, one bit at a time.
  int code = 0, first = 0, index = 0;
  for (int bits = 1; bits <= kMaxBits; ++bits) {
    uint32_t bit = 0;
    if (!in->Take(1, &bit)) return -1;
    code |= static_cast<int>(bit);
    const int count = h.count[bits];
    if (code - count < first) return h.symbols[index + (code - first)];
    index += count;
    first = (first + count) << 1;
    code <<= 1;
  }
  return -1;
}

constexpr uint16_t kLengthBase[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                      15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr uint8_t kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr uint16_t kDistBase[30] = {1,    2,    3,    4,     5,     7,    9,    13,
                                    17,   25,   33,   49,    65,    97,   129,  193,
                                    257,  385,  513,  769,   1025,  1537, 2049, 3073,
                                    4097, 6145, 8193, 12289, 16385, 24577};
constexpr uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

Status Corrupt(const char* what) {
  return InvalidArgument("image: corrupt compressed data (%s)", what);
}

struct Output {
  uint8_t* out;
  size_t size;
  size_t pos = 0;
  bool full() const { return pos == size; }
};

// One block's symbols until its end code, or until the output is full.
Status Codes(BitReader* in, const Huffman& lit, const Huffman& dist, Output* o) {
  while (!o->full()) {
    const int symbol = Decode(in, lit);
    if (symbol < 0) return Corrupt("a literal code");
    if (symbol < 256) {
      o->out[o->pos++] = static_cast<uint8_t>(symbol);
      continue;
    }
    if (symbol == 256) return Status::Ok();
    const int l = symbol - 257;
    if (l >= 29) return Corrupt("a length code");
    uint32_t extra = 0;
    if (!in->Take(kLengthExtra[l], &extra)) return Corrupt("the stream ends");
    size_t length = kLengthBase[l] + extra;
    const int d = Decode(in, dist);
    if (d < 0 || d >= 30) return Corrupt("a distance code");
    if (!in->Take(kDistExtra[d], &extra)) return Corrupt("the stream ends");
    const size_t distance = kDistBase[d] + extra;
    if (distance > o->pos) return Corrupt("a distance before the start");
    if (length > o->size - o->pos) length = o->size - o->pos;
    // Byte by byte: the copy may overlap what it writes.
    uint8_t* to = o->out + o->pos;
    const uint8_t* from = to - distance;
    for (size_t i = 0; i < length; ++i) to[i] = from[i];
    o->pos += length;
  }
  return Status::Ok();
}

Status Dynamic(BitReader* in, Huffman* lit, Huffman* dist) {
  uint32_t hlit = 0, hdist = 0, hclen = 0;
  if (!in->Take(5, &hlit) || !in->Take(5, &hdist) || !in->Take(4, &hclen)) {
    return Corrupt("the stream ends");
  }
  hlit += 257;
  hdist += 1;
  hclen += 4;
  if (hlit > 286 || hdist > 30) return Corrupt("code counts");
  static constexpr uint8_t kOrder[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                         11, 4,  12, 3, 13, 2, 14, 1, 15};
  uint8_t lengths[286 + 30] = {};
  for (uint32_t i = 0; i < hclen; ++i) {
    uint32_t v = 0;
    if (!in->Take(3, &v)) return Corrupt("the stream ends");
    lengths[kOrder[i]] = static_cast<uint8_t>(v);
  }
  Huffman lengths_code;
  if (!Build(lengths, 19, &lengths_code)) return Corrupt("code length code");
  std::memset(lengths, 0, 19);
  uint32_t i = 0;
  while (i < hlit + hdist) {
    const int symbol = Decode(in, lengths_code);
    if (symbol < 0) return Corrupt("a code length");
    if (symbol < 16) {
      lengths[i++] = static_cast<uint8_t>(symbol);
      continue;
    }
    uint32_t repeat = 0;
    uint8_t value = 0;
    if (symbol == 16) {
      if (i == 0) return Corrupt("a repeat with nothing before");
      value = lengths[i - 1];
      if (!in->Take(2, &repeat)) return Corrupt("the stream ends");
      repeat += 3;
    } else if (symbol == 17) {
      if (!in->Take(3, &repeat)) return Corrupt("the stream ends");
      repeat += 3;
    } else {
      if (!in->Take(7, &repeat)) return Corrupt("the stream ends");
      repeat += 11;
    }
    if (i + repeat > hlit + hdist) return Corrupt("code lengths past the count");
    while (repeat-- > 0) lengths[i++] = value;
  }
  if (lengths[256] == 0) return Corrupt("no end-of-block code");
  if (!Build(lengths, static_cast<int>(hlit), lit) ||
      !Build(lengths + hlit, static_cast<int>(hdist), dist)) {
    return Corrupt("over-subscribed code");
  }
  return Status::Ok();
}

void Fixed(Huffman* lit, Huffman* dist) {
  uint8_t lengths[288];
  for (int i = 0; i < 144; ++i) lengths[i] = 8;
  for (int i = 144; i < 256; ++i) lengths[i] = 9;
  for (int i = 256; i < 280; ++i) lengths[i] = 7;
  for (int i = 280; i < 288; ++i) lengths[i] = 8;
  Build(lengths, 288, lit);
  for (int i = 0; i < 30; ++i) lengths[i] = 5;
  Build(lengths, 30, dist);
}

}  // namespace

Status InflateZlib(InflateSource source, void* context, uint8_t* out, size_t out_bytes) {
  BitReader in(source, context);
  Output o{out, out_bytes};
  uint32_t cmf = 0, flg = 0;
  if (!in.Take(8, &cmf) || !in.Take(8, &flg)) return Corrupt("no zlib header");
  if ((cmf & 15) != 8 || (cmf >> 4) > 7 || (cmf * 256 + flg) % 31 != 0) {
    return Corrupt("zlib header");
  }
  if (flg & 32) return Corrupt("a preset dictionary");
  Huffman lit, dist;
  bool last = false;
  while (!last && !o.full()) {
    uint32_t header = 0;
    if (!in.Take(3, &header)) return Corrupt("the stream ends");
    last = header & 1;
    const uint32_t type = header >> 1;
    if (type == 0) {
      in.AlignToByte();
      uint32_t len = 0, nlen = 0;
      if (!in.Take(16, &len) || !in.Take(16, &nlen)) return Corrupt("the stream ends");
      if ((len ^ 0xffff) != nlen) return Corrupt("a stored block's length");
      for (uint32_t i = 0; i < len && !o.full(); ++i) {
        if (!in.Byte(&o.out[o.pos])) return Corrupt("the stream ends");
        ++o.pos;
      }
    } else if (type == 1) {
      Fixed(&lit, &dist);
      EMBER_RETURN_IF_ERROR(Codes(&in, lit, dist, &o));
    } else if (type == 2) {
      EMBER_RETURN_IF_ERROR(Dynamic(&in, &lit, &dist));
      EMBER_RETURN_IF_ERROR(Codes(&in, lit, dist, &o));
    } else {
      return Corrupt("block type 3");
    }
  }
  if (!o.full())
    return InvalidArgument("image: the compressed data ends early (truncated file)");
  return Status::Ok();
}

}  // namespace ember
