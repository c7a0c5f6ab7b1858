// ByteLevelMap: GPT-2's reversible byte <-> code point alphabet, in which byte-level BPE
// vocabularies spell their tokens ("Ġ" for a space). Built by BpeTokenizer and its tests;
// immutable after construction, so all methods are const and thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace smallmind::worker {

class ByteLevelMap {
 public:
  // Printable bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand for themselves; the other 68
  // bytes, in increasing order, take U+0100, U+0101, ... (so ' ' = 0x20 becomes U+0120 'Ġ').
  ByteLevelMap();

  char32_t CodePoint(uint8_t byte) const { return byte_to_cp_[byte]; }
  // The byte `cp` stands for, or -1 when `cp` is outside the alphabet.
  int Byte(char32_t cp) const { return cp < cp_to_byte_.size() ? cp_to_byte_[cp] : -1; }

  // Appends the UTF-8 spelling of every byte of `bytes`.
  void AppendEncoded(std::string_view bytes, std::string* out) const;
  // Appends the bytes `text` spells: each alphabet code point gives its byte, anything else
  // (a code point outside the alphabet, invalid UTF-8) is copied unchanged.
  void AppendDecoded(std::string_view text, std::string* out) const;

 private:
  std::array<char32_t, 256> byte_to_cp_{};
  std::array<int16_t, 324> cp_to_byte_{};        // every alphabet code point is below U+0144
  std::array<std::array<char, 2>, 256> utf8_{};  // the 2-byte or 1-byte (then [1] = 0) spelling
};

// Decodes the code point starting at text[*pos] and advances *pos past it; returns -1 (advancing
// one byte) on invalid UTF-8: a bad lead or continuation byte, an overlong form, a surrogate or a
// value past U+10FFFF.
int32_t NextCodePoint(std::string_view text, size_t* pos);

// Appends the UTF-8 encoding of `cp` (which must be a Unicode scalar value).
void AppendUtf8(char32_t cp, std::string* out);

}  // namespace smallmind::worker
