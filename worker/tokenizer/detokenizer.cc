#include "worker/tokenizer/detokenizer.h"

#include <string_view>

namespace smallmind::worker {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
// Longer than any piece of the supported vocabularies, so bytes_ never grows in practice.
constexpr size_t kTokenBytesCapacity = 256;

}  // namespace

Detokenizer::Detokenizer(const Tokenizer& tokenizer, TokenId prev)
    : tokenizer_(tokenizer), prev_(prev) {
  bytes_.reserve(kTokenBytesCapacity);
}

void Detokenizer::Push(TokenId id, std::string* text_out) {
  bytes_.clear();
  tokenizer_.AppendTokenBytes(prev_, id, &bytes_);
  prev_ = id;
  for (char c : bytes_) {
    const auto b = static_cast<uint8_t>(c);
    if (pending_len_ == 0 && b < 0x80) {
      text_out->push_back(c);  // ASCII fast path
    } else {
      PushByte(b, text_out);
    }
  }
}

void Detokenizer::Flush(std::string* text_out) {
  if (pending_len_ > 0) text_out->append(kReplacement);
  pending_len_ = 0;
}

void Detokenizer::PushByte(uint8_t b, std::string* out) {
  if (pending_len_ == 0) {
    StartSequence(b, out);
    return;
  }
  const uint8_t lo = pending_len_ == 1 ? second_lo_ : 0x80;
  const uint8_t hi = pending_len_ == 1 ? second_hi_ : 0xBF;
  if (b < lo || b > hi) {
    // The pending bytes are a maximal ill-formed subsequence; `b` starts afresh.
    out->append(kReplacement);
    pending_len_ = 0;
    StartSequence(b, out);
    return;
  }
  pending_[pending_len_++] = static_cast<char>(b);
  if (pending_len_ == need_) {
    out->append(pending_.data(), need_);
    pending_len_ = 0;
  }
}

// Lead-byte table of Unicode 15 §3.9 Table 3-7 (well-formed UTF-8 byte sequences).
void Detokenizer::StartSequence(uint8_t b, std::string* out) {
  if (b < 0x80) {
    out->push_back(static_cast<char>(b));
    return;
  }
  second_lo_ = 0x80;
  second_hi_ = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    need_ = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need_ = 3;
    if (b == 0xE0) second_lo_ = 0xA0;  // no overlongs
    if (b == 0xED) second_hi_ = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    need_ = 4;
    if (b == 0xF0) second_lo_ = 0x90;  // no overlongs
    if (b == 0xF4) second_hi_ = 0x8F;  // nothing past U+10FFFF
  } else {
    out->append(kReplacement);  // continuation byte, C0/C1 or F5..FF: never a valid start
    return;
  }
  pending_[0] = static_cast<char>(b);
  pending_len_ = 1;
}

}  // namespace smallmind::worker
