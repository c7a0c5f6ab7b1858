// libFuzzer target for the tokenizers (SentencePiece-style and byte-level BPE with the PCRE2
// pre-tokenizer families): the first byte picks a vocabulary, the rest is a prompt a client sends.
// Encode and EncodeSpecial must give ids inside the vocabulary, and for valid UTF-8 the ids must
// decode (Detokenizer, as streamed) back to the text, byte for byte, with a vocabulary that has a
// token for every byte; one that lacks some (falcon's has none for most control characters and
// some lead bytes) drops those bytes, as llama.cpp and Hugging Face do, so there the tokens' bytes
// must be the text's less some, in order. Invalid UTF-8 must not crash.
// Vocabularies: every supported ggml-vocab-*.gguf in $SMALLMIND_FUZZ_VOCABS (e.g.
// ../shared/tokenizer-vectors). Built by tests/fuzz/CMakeLists.txt with clang only
// (-fsanitize=fuzzer,address,undefined).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/gguf/gguf_vocab.h"
#include "worker/tokenizer/detokenizer.h"
#include "worker/tokenizer/tokenizer.h"

namespace {

using smallmind::worker::Detokenizer;
using smallmind::worker::TokenId;
using smallmind::worker::Tokenizer;

void Require(bool condition) {
  if (!condition) std::abort();
}

bool ValidUtf8(std::string_view s) {
  try {
    (void)nlohmann::json(std::string(s)).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

struct Vocab {
  std::string name;
  std::unique_ptr<smallmind::worker::GgufFile> file;  // the tokenizer's strings live in it
  std::unique_ptr<Tokenizer> tokenizer;
  bool every_byte = true;  // each byte alone encodes to some token
};

// Whether `part` is `whole` with some bytes left out.
bool IsSubsequence(std::string_view part, std::string_view whole) {
  size_t i = 0;
  for (char c : whole) {
    if (i < part.size() && part[i] == c) i++;
  }
  return i == part.size();
}

const std::vector<Vocab>& Vocabs() {
  static const auto* vocabs = [] {
    auto* out = new std::vector<Vocab>;
    const char* dir = std::getenv("SMALLMIND_FUZZ_VOCABS");
    Require(dir != nullptr);  // the target needs vocabularies
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".gguf") continue;
      auto file = smallmind::worker::GgufFile::Open(entry.path().string());
      if (!file.ok()) continue;
      auto tok = smallmind::worker::GgufTokenizer(**file);
      if (!tok.ok()) continue;  // a family smallmind refuses (WordPiece)
      Vocab v{entry.path().filename().string(), std::move(*file), std::move(*tok)};
      for (int b = 1; b < 256; b++) {
        if (v.tokenizer->Encode(std::string(1, static_cast<char>(b)), false).empty()) {
          v.every_byte = false;
        }
      }
      out->push_back(std::move(v));
    }
    Require(!out->empty());
    return out;
  }();
  return *vocabs;
}

void Check(const Tokenizer& tok, const std::vector<TokenId>& ids) {
  for (TokenId id : ids) Require(id >= 0 && id < tok.vocab_size());
}

// The bytes the tokens stand for, before any UTF-8 assembly.
std::string RawBytes(const Tokenizer& tok, const std::vector<TokenId>& ids) {
  std::string bytes;
  TokenId prev = -1;
  for (TokenId id : ids) {
    tok.AppendTokenBytes(prev, id, &bytes);
    prev = id;
  }
  return bytes;
}

std::string Decode(const Tokenizer& tok, const std::vector<TokenId>& ids) {
  Detokenizer detok(tok);
  std::string text;
  for (TokenId id : ids) detok.Push(id, &text);
  detok.Flush(&text);
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::vector<Vocab>& vocabs = Vocabs();
  const Vocab& vocab = vocabs[data[0] % vocabs.size()];
  const Tokenizer& tok = *vocab.tokenizer;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::vector<TokenId> plain = tok.Encode(text, /*add_bos=*/false);
  Check(tok, plain);
  const std::vector<TokenId> with_bos = tok.Encode(text, /*add_bos=*/true);
  Check(tok, with_bos);
  Check(tok, tok.EncodeSpecial(text, /*add_bos=*/true));
  const std::string decoded = Decode(tok, with_bos);
  Require(ValidUtf8(decoded));  // the Detokenizer's output is always valid UTF-8
  if (ValidUtf8(text) &&
      (vocab.every_byte ? decoded != text : !IsSubsequence(RawBytes(tok, with_bos), text))) {
    std::fprintf(stderr, "%s: '%s' decodes as '%s'; ids:", vocab.name.c_str(),
                 std::string(text).c_str(), decoded.c_str());
    for (TokenId id : with_bos) std::fprintf(stderr, " %d", id);
    std::fprintf(stderr, "\n");
    std::abort();
  }
  return 0;
}
