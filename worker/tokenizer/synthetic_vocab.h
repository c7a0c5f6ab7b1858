// Synthetic vocabularies for tests and benchmarks, shaped like real families' (byte-level BPE with
// a merges list; Gemma-style SentencePiece with byte fallback and user-defined pieces) and learned
// from a sample text by a small BPE trainer, so they need no model file. Deterministic: the same
// arguments give the same vocabulary. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "worker/tokenizer/bpe_tokenizer.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {

// About `bytes` bytes (at least one paragraph) of mixed text: English prose with contractions and
// capitals, code, numbers, runs of spaces, tabs and newlines, Cyrillic, CJK, Khmer, emoji. The
// same text every call (a fixed paragraph repeated, then cut at a code point boundary).
std::string SampleText(size_t bytes);

// Byte-level BPE over GPT-2's alphabet: ids 0..255 the single bytes (id = byte), then one token per
// merge learned on `corpus` taken as one word, with no pre-tokenization (so merges cross word,
// digit and whitespace boundaries and only a correct pre-tokenizer keeps them from applying), then
// `whole_words` (raw text, spelled in the alphabet; a token no merge reaches, for ignore_merges),
// then the control tokens <|endoftext|> <|im_start|> <|im_end|> and the user-defined token
// <|sep|>. `pre` is left default; BOS/EOS are unset.
BpeVocab MakeSyntheticBpeVocab(std::string_view corpus, int n_merges,
                               const std::vector<std::string>& whole_words);

// A Gemma-shaped SentencePiece vocabulary of exactly `n_pieces` pieces (at least 600): 0 <pad>,
// 1 <eos>, 2 <bos> (control), 3 <unk>, 4 <start_of_turn>, 5 <end_of_turn> (user-defined), runs of
// 1..31 newlines and of 2..31 "\xE2\x96\x81" (user-defined, score 0), the 256 byte pieces <0x00>..
// <0xFF>, then every code point of `corpus` (spaces as "\xE2\x96\x81") and up to `n_merges` pieces
// learned by merging within "\xE2\x96\x81"-led words (the earlier merge scores higher), then filler
// pieces ("\xE2\x96\x81" and five or more letters a-z, scored below everything) up to `n_pieces`.
// Gemma's flags: BOS added, no dummy prefix; EOT found by spelling (<end_of_turn>).
SpmVocab MakeSyntheticSpmVocab(std::string_view corpus, int n_merges, int n_pieces);

}  // namespace smallmind::worker
