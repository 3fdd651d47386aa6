// JPEG entropy decoding: Huffman tables, the bit reader, baseline and progressive scans.
#include <cstring>

#include "runtime/vision/jpeg_internal.h"

namespace ember {
namespace jpeg_internal {

const uint8_t kNaturalOrder[64 + 16] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33,
    40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36,
    29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54,
    47, 55, 62, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63};

Status ParseDht(const uint8_t* data, size_t size, HuffmanSpec* dc_specs,
                HuffmanSpec* ac_specs) {
  size_t pos = 0;
  // Each table takes at least 17 bytes, so the loop runs at most size / 17 times.
  while (pos < size) {
    if (size - pos < 17) return InvalidArgument("jpeg: DHT segment too short");
    const int index = data[pos];
    const bool is_ac = (index & 0x10) != 0;
    const int slot = index & 0x0F;
    if ((index & ~0x1F) != 0 || slot > 3) {
      return InvalidArgument("jpeg: DHT table index 0x%02x is invalid", index);
    }
    HuffmanSpec spec;
    size_t count = 0;
    for (int l = 1; l <= 16; ++l) {
      spec.counts[l] = data[pos + l];
      count += spec.counts[l];
    }
    pos += 17;
    if (count > 256)
      return InvalidArgument("jpeg: DHT table has %zu codes (> 256)", count);
    if (count > size - pos) return InvalidArgument("jpeg: DHT segment too short");
    memcpy(spec.symbols, data + pos, count);
    pos += count;
    spec.defined = true;
    (is_ac ? ac_specs : dc_specs)[slot] = spec;
  }
  return Status::Ok();
}

Status BuildHuffmanDecoder(const HuffmanSpec& spec, bool is_dc, HuffmanDecoder* out) {
  memset(out->fast, 0, sizeof(out->fast));
  int32_t code = 0;
  int k = 0;  // symbols assigned so far
  for (int l = 1; l <= 16; ++l) {
    const int n = spec.counts[l];
    out->value_offset[l] = k - code;
    out->max_code[l] = n > 0 ? code + n - 1 : -1;
    // The next free code must still fit in l bits: no code may be all ones.
    if (code + n >= (int32_t{1} << l)) {
      return InvalidArgument("jpeg: Huffman table is oversubscribed");
    }
    for (int i = 0; i < n; ++i, ++k, ++code) {
      if (l <= HuffmanDecoder::kFastBits) {
        // Every 9-bit lookahead that starts with this code decodes to it.
        const int shift = HuffmanDecoder::kFastBits - l;
        const uint16_t entry = static_cast<uint16_t>((l << 8) | spec.symbols[k]);
        for (int j = 0; j < (1 << shift); ++j) out->fast[(code << shift) | j] = entry;
      }
    }
    code <<= 1;
  }
  out->max_code[17] = INT32_MAX;
  memcpy(out->symbols, spec.symbols, sizeof(out->symbols));
  if (is_dc) {
    for (int i = 0; i < k; ++i) {
      if (spec.symbols[i] > 15) return InvalidArgument("jpeg: DC Huffman symbol > 15");
    }
  }
  return Status::Ok();
}

namespace {

// MSB-first bit reader over entropy-coded bytes: undoes 0xFF00 stuffing, stops at a
// marker and then supplies zero bits, counting them so a scan that needs bits past its
// data is reported as truncated instead of decoded from zeros.
class BitReader {
 public:
  BitReader(const uint8_t* bytes, size_t num_bytes, size_t pos)
      : bytes_(bytes), num_bytes_(num_bytes), pos_(pos) {}

  // Ensures at least 25 bits in the accumulator (enough for any one code plus extra
  // bits).
  void Fill() {
    while (bits_ <= 56) {
      uint32_t byte = 0;
      if (at_marker_) {
        fake_bits_ += 8;
      } else if (pos_ >= num_bytes_) {
        at_marker_ = true;
        marker_pos_ = num_bytes_;
        fake_bits_ += 8;
      } else if (bytes_[pos_] != 0xFF) {
        byte = bytes_[pos_++];
      } else {
        size_t next =
            pos_ + 1;  // 0xFF fill bytes, then 0x00 (a stuffed 0xFF) or a marker
        while (next < num_bytes_ && bytes_[next] == 0xFF) ++next;
        if (next < num_bytes_ && bytes_[next] == 0x00) {
          byte = 0xFF;
          pos_ = next + 1;
        } else {
          at_marker_ = true;
          marker_pos_ = pos_;
          fake_bits_ += 8;
        }
      }
      acc_ = (acc_ << 8) | byte;
      bits_ += 8;
    }
  }

  uint32_t Peek(int n) {
    return static_cast<uint32_t>(acc_ >> (bits_ - n)) & ((1u << n) - 1);
  }
  void Skip(int n) { bits_ -= n; }
  uint32_t Get(int n) {  // n <= 16
    if (n == 0) return 0;
    if (bits_ < 32) Fill();
    const uint32_t v = Peek(n);
    bits_ -= n;
    return v;
  }
  // Decodes one Huffman symbol; -1 for a code the table does not have.
  int Decode(const HuffmanDecoder& table) {
    if (bits_ < 32) Fill();
    const uint16_t entry = table.fast[Peek(HuffmanDecoder::kFastBits)];
    if (entry != 0) {
      bits_ -= entry >> 8;
      return entry & 0xFF;
    }
    const uint32_t code16 = Peek(16);
    for (int l = HuffmanDecoder::kFastBits + 1; l <= 16; ++l) {
      const int32_t code = static_cast<int32_t>(code16 >> (16 - l));
      if (code <= table.max_code[l]) {
        bits_ -= l;
        return table.symbols[(code + table.value_offset[l]) & 0xFF];
      }
    }
    return -1;
  }
  // True when the decoder consumed zero bits invented past the end of the data.
  bool Overrun() const { return bits_ < fake_bits_; }

  // Drops the buffered bits and moves to the next marker (skipping any garbage, as
  // libjpeg's next_marker does); returns its position, or num_bytes if none.
  size_t SeekMarker() {
    size_t p = at_marker_ ? marker_pos_ : pos_;
    while (p < num_bytes_) {
      if (bytes_[p] != 0xFF) {
        ++p;
        continue;
      }
      size_t next = p + 1;
      while (next < num_bytes_ && bytes_[next] == 0xFF) ++next;
      if (next >= num_bytes_) return num_bytes_;
      if (bytes_[next] != 0x00) return next - 1;
      p = next + 1;
    }
    return num_bytes_;
  }
  void Restart(size_t pos) {
    pos_ = pos;
    acc_ = 0;
    bits_ = 0;
    fake_bits_ = 0;
    at_marker_ = false;
  }

 private:
  const uint8_t* bytes_;
  size_t num_bytes_;
  size_t pos_;
  uint64_t acc_ = 0;
  int bits_ = 0;
  int fake_bits_ = 0;
  bool at_marker_ = false;
  size_t marker_pos_ = 0;
};

// Sign-extends an s-bit magnitude category value (JPEG F.2.2.1's EXTEND).
inline int Extend(uint32_t value, int s) {
  if (s == 0) return 0;
  const int v = static_cast<int>(value);
  return v < (1 << (s - 1)) ? v - (1 << s) + 1 : v;
}

// value << shift as libjpeg's LEFT_SHIFT (through unsigned), stored as a JCOEF.
inline int16_t ShiftToCoef(int value, int shift) {
  return static_cast<int16_t>(static_cast<uint32_t>(value) << shift);
}

Status BadCode() { return InvalidArgument("jpeg: bad Huffman code"); }

class ScanDecoder {
 public:
  ScanDecoder(JpegState* state, BitReader* reader) : s_(state), br_(reader) {}

  Status Block(Component* comp, int16_t* block) {
    if (!s_->progressive) return Baseline(comp, block);
    if (s_->ss == 0) return s_->ah == 0 ? DcFirst(comp, block) : DcRefine(block);
    return s_->ah == 0 ? AcFirst(comp, block) : AcRefine(comp, block);
  }
  void ResetEobRun() { eob_run_ = 0; }

 private:
  Status DecodeDc(Component* comp, int* diff) {
    const int t = br_->Decode(s_->dc_decoders[comp->dc_table]);
    if (t < 0) return BadCode();
    *diff = Extend(br_->Get(t), t);
    // int arithmetic that wraps like libjpeg's on hostile input instead of overflowing.
    comp->dc_pred = static_cast<int>(static_cast<uint32_t>(comp->dc_pred) +
                                     static_cast<uint32_t>(*diff));
    return Status::Ok();
  }

  Status Baseline(Component* comp, int16_t* block) {
    int diff = 0;
    EMBER_RETURN_IF_ERROR(DecodeDc(comp, &diff));
    block[0] = static_cast<int16_t>(comp->dc_pred);
    const HuffmanDecoder& ac = s_->ac_decoders[comp->ac_table];
    for (int k = 1; k < 64; ++k) {  // k only grows: at most 63 iterations
      const int rs = br_->Decode(ac);
      if (rs < 0) return BadCode();
      const int r = rs >> 4, s = rs & 15;
      if (s != 0) {
        k += r;
        block[kNaturalOrder[k]] = static_cast<int16_t>(Extend(br_->Get(s), s));
      } else if (r == 15) {
        k += 15;
      } else {
        break;
      }
    }
    return Status::Ok();
  }

  Status DcFirst(Component* comp, int16_t* block) {
    int diff = 0;
    EMBER_RETURN_IF_ERROR(DecodeDc(comp, &diff));
    block[0] = ShiftToCoef(comp->dc_pred, s_->al);
    return Status::Ok();
  }

  Status DcRefine(int16_t* block) {
    if (br_->Get(1)) block[0] = static_cast<int16_t>(block[0] | (1 << s_->al));
    return Status::Ok();
  }

  Status AcFirst(Component* comp, int16_t* block) {
    if (eob_run_ > 0) {
      --eob_run_;
      return Status::Ok();
    }
    const HuffmanDecoder& ac = s_->ac_decoders[comp->ac_table];
    for (int k = s_->ss; k <= s_->se; ++k) {
      const int rs = br_->Decode(ac);
      if (rs < 0) return BadCode();
      const int r = rs >> 4, s = rs & 15;
      if (s != 0) {
        k += r;
        block[kNaturalOrder[k]] = ShiftToCoef(Extend(br_->Get(s), s), s_->al);
      } else if (r == 15) {
        k += 15;
      } else {
        eob_run_ = (1 << r) + static_cast<int>(br_->Get(r)) - 1;
        break;
      }
    }
    return Status::Ok();
  }

  // Adds a correction bit to an already nonzero coefficient (G.1.2.3).
  void Refine(int16_t* coef, int p1) {
    if (br_->Get(1) && (*coef & p1) == 0) {
      *coef = static_cast<int16_t>(*coef >= 0 ? *coef + p1 : *coef - p1);
    }
  }

  Status AcRefine(Component* comp, int16_t* block) {
    const int p1 = 1 << s_->al;
    const HuffmanDecoder& ac = s_->ac_decoders[comp->ac_table];
    int k = s_->ss;
    if (eob_run_ == 0) {
      for (; k <= s_->se; ++k) {
        const int rs = br_->Decode(ac);
        if (rs < 0) return BadCode();
        int r = rs >> 4;
        int value = 0;
        if ((rs & 15) != 0) {
          // A new coefficient is always +-1 at this bit (libjpeg only warns if s != 1).
          value = br_->Get(1) ? p1 : -p1;
        } else if (r != 15) {
          eob_run_ = (1 << r) + static_cast<int>(br_->Get(r));
          break;
        }
        // Skip r zero coefficients, refining the nonzero ones on the way.
        for (; k <= s_->se; ++k) {
          int16_t* coef = &block[kNaturalOrder[k]];
          if (*coef != 0) {
            Refine(coef, p1);
          } else if (--r < 0) {
            break;
          }
        }
        if (value != 0) block[kNaturalOrder[k]] = static_cast<int16_t>(value);
      }
    }
    if (eob_run_ > 0) {
      for (; k <= s_->se; ++k) {
        int16_t* coef = &block[kNaturalOrder[k]];
        if (*coef != 0) Refine(coef, p1);
      }
      --eob_run_;
    }
    return Status::Ok();
  }

  JpegState* s_;
  BitReader* br_;
  int eob_run_ = 0;
};

}  // namespace

Status DecodeScan(JpegState* state, const uint8_t* bytes, size_t num_bytes, size_t* pos) {
  BitReader reader(bytes, num_bytes, *pos);
  ScanDecoder decoder(state, &reader);
  for (int i = 0; i < state->num_scan_comps; ++i) {
    state->comps[state->scan_comp[i]].dc_pred = 0;
  }
  const bool interleaved = state->num_scan_comps > 1;
  Component* first = &state->comps[state->scan_comp[0]];
  const int mcus_x = interleaved ? state->mcus_x : first->width_in_blocks;
  const int mcus_y = interleaved ? state->mcus_y : first->height_in_blocks;
  const int restart_interval = state->restart_interval;
  int restarts_to_go = restart_interval;
  int next_restart = 0;
  for (int my = 0; my < mcus_y; ++my) {
    for (int mx = 0; mx < mcus_x; ++mx) {
      if (restart_interval > 0) {
        if (restarts_to_go == 0) {
          const size_t marker = reader.SeekMarker();
          if (marker + 1 >= num_bytes) return InvalidArgument("jpeg: truncated scan");
          if (bytes[marker + 1] != 0xD0 + next_restart) {
            return InvalidArgument("jpeg: expected RST%d, found marker 0x%02x",
                                   next_restart, bytes[marker + 1]);
          }
          reader.Restart(marker + 2);
          next_restart = (next_restart + 1) & 7;
          restarts_to_go = restart_interval;
          decoder.ResetEobRun();
          for (int i = 0; i < state->num_scan_comps; ++i) {
            state->comps[state->scan_comp[i]].dc_pred = 0;
          }
        }
        --restarts_to_go;
      }
      for (int i = 0; i < state->num_scan_comps; ++i) {
        Component* comp = &state->comps[state->scan_comp[i]];
        const int bh = interleaved ? comp->h : 1;
        const int bv = interleaved ? comp->v : 1;
        for (int by = 0; by < bv; ++by) {
          for (int bx = 0; bx < bh; ++bx) {
            const int block_x = mx * bh + bx, block_y = my * bv + by;
            int16_t* block = state->dummy_block;
            int16_t* pad_dc = nullptr;
            if (block_x < comp->width_in_blocks && block_y < comp->height_in_blocks) {
              block =
                  comp->coefs +
                  (static_cast<size_t>(block_y) * comp->width_in_blocks + block_x) * 64;
            } else if (block_x < comp->width_in_blocks &&
                       block_y - comp->height_in_blocks < comp->pad_rows) {
              pad_dc = comp->pad_dc +
                       static_cast<size_t>(block_y - comp->height_in_blocks) *
                           comp->width_in_blocks +
                       block_x;
              block[0] = *pad_dc;  // DC refinement reads it
            }
            EMBER_RETURN_IF_ERROR(decoder.Block(comp, block));
            if (pad_dc != nullptr) *pad_dc = block[0];
          }
        }
      }
      if (reader.Overrun())
        return InvalidArgument("jpeg: truncated or corrupt scan data");
    }
  }
  *pos = reader.SeekMarker();
  return Status::Ok();
}

}  // namespace jpeg_internal
}  // namespace ember
