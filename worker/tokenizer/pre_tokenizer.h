// PreTokenizer: splits text into the pieces byte-level BPE merges within, by running a sequence of
// PCRE2 regexes (UTF + Unicode properties, JIT when available). Built once by BpeTokenizer;
// immutable afterwards, and Split is const and thread-safe (each call has its own match data).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"

namespace smallmind::worker {

class PreTokenizer {
 public:
  // Compiles `patterns` (PCRE2 syntax, applied in order). InvalidArgument names the pattern and
  // PCRE2's message when one does not compile.
  static shared::Result<std::unique_ptr<PreTokenizer>> Create(std::vector<std::string> patterns);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the pieces of `text`, in order; together they cover `text` exactly. Each pattern
  // splits every piece the previous ones produced, keeping both its matches and the runs between
  // them as pieces (Hugging Face's "Isolated" split behaviour, llama.cpp's unicode_regex_split).
  // Lookarounds and `$` see only the piece being split. Invalid UTF-8 never matches and so ends
  // up in the runs between matches. No pattern: the whole text is one piece.
  void Split(std::string_view text, std::vector<std::string_view>* pieces) const;

  int pattern_count() const { return static_cast<int>(patterns_.size()); }

 private:
  struct Compiled;  // one compiled pattern, defined in the .cc
  PreTokenizer() = default;
  void SplitOne(const Compiled& regex, std::string_view piece, void* match_data,
                std::vector<std::string_view>* out) const;

  std::vector<std::string> patterns_;
  std::vector<std::unique_ptr<Compiled>> compiled_;  // [patterns_.size()]
};

}  // namespace smallmind::worker
