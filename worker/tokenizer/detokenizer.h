// Detokenizer: turns one request's generated token ids into UTF-8 text deltas that never split a
// code point. One per request, used by the scheduler thread only; not thread-safe. The Tokenizer
// must outlive it.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {

class Detokenizer {
 public:
  // `prev` is the token before the first pushed one (the last prompt token, or -1 for none); it
  // decides whether the first piece loses its leading space after BOS.
  explicit Detokenizer(const Tokenizer& tokenizer, TokenId prev = -1);

  // Appends to `text_out` the complete code points that token `id` finishes. Bytes of an
  // incomplete code point wait for the next token. Bytes that can never become valid UTF-8 (an
  // invalid lead byte, a bad continuation, an overlong form, a surrogate, past U+10FFFF) become one
  // U+FFFD per maximal ill-formed subsequence, as the Unicode standard recommends. Does not
  // allocate when `text_out` has capacity.
  void Push(TokenId id, std::string* text_out);

  // At the end of the stream: a dangling incomplete code point becomes U+FFFD.
  void Flush(std::string* text_out);

  // Whether bytes of an incomplete code point are waiting.
  bool has_pending() const { return pending_len_ > 0; }

 private:
  void PushByte(uint8_t b, std::string* out);
  void StartSequence(uint8_t b, std::string* out);

  const Tokenizer& tokenizer_;
  TokenId prev_;
  std::string bytes_;              // scratch: the raw bytes of one token; reserved up front
  std::array<char, 4> pending_{};  // [pending_len_] bytes of the code point being assembled
  int pending_len_ = 0;
  int need_ = 0;              // total length of the code point being assembled
  uint8_t second_lo_ = 0x80;  // allowed range of its second byte (excludes overlongs,
  uint8_t second_hi_ = 0xBF;  // surrogates and > U+10FFFF)
};

}  // namespace smallmind::worker
