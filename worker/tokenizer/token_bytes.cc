#include "worker/tokenizer/token_bytes.h"

namespace smallmind::worker {

TokenBytes::TokenBytes(const Tokenizer& tokenizer) {
  const int n = tokenizer.vocab_size();
  offsets_.reserve(static_cast<size_t>(n) + 1);
  offsets_.push_back(0);
  // After an ordinary token (not BOS): SentencePiece drops a piece's leading space only after BOS,
  // and an output token never follows BOS but at the very start, where a space is only
  // whitespace to every grammar that cares.
  for (TokenId id = 0; id < n; id++) {
    // BOS and the end tokens are control tokens whatever the vocabulary says of their pieces.
    const bool control =
        id == tokenizer.bos_id() || id == tokenizer.eos_id() || id == tokenizer.eot_id();
    if (!control) tokenizer.AppendTokenBytes(-1, id, &bytes_);
    offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
    const std::string_view bytes = Of(id);
    bool plain = !bytes.empty();
    for (char c : bytes) plain = plain && c >= 0x20 && c <= 0x7e && c != '"' && c != '\\';
    plain_.push_back(plain ? 1 : 0);
  }
  bytes_.shrink_to_fit();
}

}  // namespace smallmind::worker
