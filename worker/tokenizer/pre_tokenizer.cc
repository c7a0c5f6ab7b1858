#include "worker/tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <utility>

namespace smallmind::worker {

struct PreTokenizer::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

namespace {

std::string Pcre2Message(int error) {
  PCRE2_UCHAR buffer[256];
  const int n = pcre2_get_error_message(error, buffer, sizeof(buffer));
  return n < 0 ? "error " + std::to_string(error)
               : std::string(reinterpret_cast<const char*>(buffer), static_cast<size_t>(n));
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* md) const { pcre2_match_data_free(md); }
};

// Advances past the code point (or invalid byte) at `pos`: where an empty match resumes.
size_t NextBoundary(std::string_view s, size_t pos) {
  ++pos;
  while (pos < s.size() && (static_cast<uint8_t>(s[pos]) & 0xC0) == 0x80) ++pos;
  return pos;
}

}  // namespace

shared::Result<std::unique_ptr<PreTokenizer>> PreTokenizer::Create(
    std::vector<std::string> patterns) {
  std::unique_ptr<PreTokenizer> pre(new PreTokenizer());
  // UTF: code points, not bytes. UCP: \s \d \w and case folding follow Unicode, as in the
  // Hugging Face (Oniguruma) regexes these patterns come from. MATCH_INVALID_UTF: invalid UTF-8 in
  // the subject is never matched instead of failing the whole match call.
  const uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF;
  for (const std::string& p : patterns) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    auto c = std::make_unique<Compiled>();
    c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.data()), p.size(), options, &error,
                            &offset, nullptr);
    if (c->code == nullptr) {
      return shared::InvalidArgument("pre-tokenizer pattern '" + p +
                                     "' does not compile at offset " + std::to_string(offset) +
                                     ": " + Pcre2Message(error));
    }
    // JIT is an optimisation: a build without it (or a refusal) falls back to the interpreter.
    pcre2_jit_compile(c->code, PCRE2_JIT_COMPLETE);
    pre->compiled_.push_back(std::move(c));
  }
  pre->patterns_ = std::move(patterns);
  return pre;
}

PreTokenizer::~PreTokenizer() = default;

void PreTokenizer::SplitOne(const Compiled& regex, std::string_view piece, void* match_data,
                            std::vector<std::string_view>* out) const {
  auto* md = static_cast<pcre2_match_data*>(match_data);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
  size_t kept = 0;   // end of what has been emitted
  size_t start = 0;  // where the next search begins
  while (start < piece.size()) {
    int rc = pcre2_match(regex.code, subject, piece.size(), start, 0, md, nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      // The JIT's fixed stack is small; the interpreter keeps its frames on the heap.
      rc = pcre2_match(regex.code, subject, piece.size(), start, PCRE2_NO_JIT, md, nullptr);
    }
    if (rc < 0) break;  // no further match (or a resource limit): the rest is one run
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t match_begin = ov[0];
    const size_t match_end = ov[1];
    if (match_end == match_begin) {  // an empty match splits nothing
      start = NextBoundary(piece, match_begin);
      continue;
    }
    if (match_begin > kept) out->push_back(piece.substr(kept, match_begin - kept));
    out->push_back(piece.substr(match_begin, match_end - match_begin));
    kept = start = match_end;
  }
  if (kept < piece.size()) out->push_back(piece.substr(kept));
}

void PreTokenizer::Split(std::string_view text, std::vector<std::string_view>* pieces) const {
  if (text.empty()) return;
  if (compiled_.empty()) {
    pieces->push_back(text);
    return;
  }
  // One pair of offsets is all Split reads; a match that has captures still reports group 0.
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> md(pcre2_match_data_create(1, nullptr));
  SM_CHECK(md != nullptr) << "pcre2_match_data_create failed";
  std::vector<std::string_view> current{text};
  std::vector<std::string_view> next;
  for (size_t i = 0; i < compiled_.size(); ++i) {
    const bool last = i + 1 == compiled_.size();
    std::vector<std::string_view>* out = last ? pieces : &next;
    for (std::string_view piece : current) SplitOne(*compiled_[i], piece, md.get(), out);
    if (!last) {
      current.swap(next);
      next.clear();
    }
  }
}

}  // namespace smallmind::worker
