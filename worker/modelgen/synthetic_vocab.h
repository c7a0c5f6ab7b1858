// MakeSyntheticSpmVocab: a SentencePiece-style vocabulary of any requested size for generated
// models (smallmind-modelgen, builtin:tiny): <unk>, <s>, </s>, the 256 byte tokens, then pieces of
// English-looking text with descending scores. Pure function; thread-safe.
#pragma once

#include "shared/status.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {

// <unk>, <s>, </s> and <0x00>..<0xFF>: the smallest vocabulary, byte-level only.
inline constexpr int kByteVocabSize = 259;
inline constexpr int kMaxSyntheticVocabSize = 1 << 18;

// Ids 0 <unk> (unknown), 1 <s> (control, BOS), 2 </s> (control, EOS), 3..258 <0x00>..<0xFF> (byte),
// all scored 0; then normal pieces with spaces as ' ': single characters, " " + letter, common
// English words built up prefix by prefix, then letter pairs, " " + pair, triples, " " + triple,
// quadruples in letter-frequency order, scored 0, -1, -2, ... so earlier pieces merge first. Every
// multi-character piece extends a piece already present by one character, so the merges can reach
// it. BOS is added by default; the dummy-prefix space only when there are normal pieces (a
// byte-level vocabulary encodes text as its raw bytes). vocab_size outside [kByteVocabSize,
// kMaxSyntheticVocabSize] is InvalidArgument.
shared::Result<SpmVocab> MakeSyntheticSpmVocab(int vocab_size);

}  // namespace smallmind::worker
