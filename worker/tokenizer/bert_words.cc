// BertWords: BERT's normaliser and pre-tokenizer, with ICU's Unicode data (categories, White_Space,
// canonical decompositions, lower case) rather than tables of our own.
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include "worker/tokenizer/wordpiece_tokenizer.h"

namespace smallmind::worker {

namespace {

// The CJK ideograph blocks Hugging Face's BertNormalizer pads with spaces (its ranges, as
// llama.cpp has them too).
bool IsCjkIdeograph(UChar32 c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool IsWhitespace(UChar32 c) { return c == '\t' || c == '\n' || c == '\r' || u_isUWhiteSpace(c); }

// Dropped by clean_text: NUL, the replacement character and every "other" (C*) character but the
// whitespace ones.
bool IsDropped(UChar32 c) { return c == 0 || c == 0xFFFD || (U_GET_GC_MASK(c) & U_GC_C_MASK) != 0; }

// ASCII punctuation and symbols (Rust's is_ascii_punctuation) or any Unicode P* character.
bool IsPunctuation(UChar32 c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126)) {
    return true;
  }
  return (U_GET_GC_MASK(c) & U_GC_P_MASK) != 0;
}

void AppendUtf8(UChar32 c, std::string* out) {
  char buf[U8_MAX_LENGTH];
  int32_t n = 0;
  U8_APPEND_UNSAFE(buf, n, c);
  out->append(buf, static_cast<size_t>(n));
}

// The canonical decomposition of c (c itself when it has none), accents (Mn) dropped, lower-cased.
void AppendStripped(const UNormalizer2* nfd, UChar32 c, std::vector<UChar32>* out) {
  UChar buf[32];
  UErrorCode err = U_ZERO_ERROR;
  const int32_t n = unorm2_getDecomposition(nfd, c, buf, 32, &err);
  if (U_FAILURE(err) || n < 0) {
    if (U_GET_GC_MASK(c) != U_GC_MN_MASK) out->push_back(u_tolower(c));
    return;
  }
  for (int32_t i = 0; i < n;) {
    UChar32 d;
    U16_NEXT(buf, i, n, d);
    if (U_GET_GC_MASK(d) != U_GC_MN_MASK) out->push_back(u_tolower(d));
  }
}

class WordSplitter {
 public:
  void Break() {
    if (!current_.empty()) words_.push_back(std::move(current_));
    current_.clear();
  }
  void Alone(UChar32 c) {
    Break();
    AppendUtf8(c, &current_);
    Break();
  }
  void Append(UChar32 c) { AppendUtf8(c, &current_); }
  std::vector<std::string> Finish() {
    Break();
    return std::move(words_);
  }

 private:
  std::vector<std::string> words_;
  std::string current_;
};

}  // namespace

std::vector<std::string> BertWords(std::string_view text) {
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* nfd = unorm2_getNFDInstance(&err);  // ICU's singleton; never null on success
  WordSplitter words;
  std::vector<UChar32> stripped;
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t length = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < length;) {
    UChar32 c;
    U8_NEXT(s, i, length, c);
    if (c < 0) continue;  // an invalid byte reads as U+FFFD, which clean_text drops
    if (IsWhitespace(c)) {
      words.Break();
      continue;
    }
    if (IsDropped(c)) continue;
    if (IsCjkIdeograph(c)) {
      words.Alone(u_tolower(c));
      continue;
    }
    stripped.clear();
    if (U_SUCCESS(err)) {
      AppendStripped(nfd, c, &stripped);
    } else {
      stripped.push_back(u_tolower(c));
    }
    for (UChar32 d : stripped) {
      if (IsPunctuation(d)) {
        words.Alone(d);
      } else {
        words.Append(d);
      }
    }
  }
  return words.Finish();
}

}  // namespace smallmind::worker
