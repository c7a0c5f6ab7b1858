#include "worker/tokenizer/pre_tokenizer_families.h"

#include <array>

namespace smallmind::worker {

namespace {

// The regexes are the ones in each model's Hugging Face tokenizer.json (the reference these
// vocabularies' expected ids come from), as llama.cpp's llama-vocab also lists them. Non-ASCII
// characters are written as \x{...} code points.

// GPT-2's ByteLevel regex: contractions, optionally space-led runs of letters / numbers / other
// symbols, then whitespace (a run before a word leaves its last space to that word).
constexpr char kGpt2[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Llama 3 (tiktoken cl100k-style): case-insensitive contractions, a letter run may take one
// leading non-letter, digits in groups of at most three, newlines kept with symbols.
constexpr char kLlama3[] = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})"
                           R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Qwen2: Llama 3's regex with every digit on its own.
constexpr char kQwen2[] = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
                          R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// CJK ideographs, U+0800..U+4E00 (which includes Khmer, Thai, kana, ...) and Hangul, as DeepSeek
// splits them off.
constexpr char kDeepSeekCjk[] = R"([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";

// DeepSeek LLM's letter class: the cased letters (Lu, Ll, Lt) of the scripts it lists.
constexpr char kDeepSeekLlmLetters[] =
    R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293})"
    R"(\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A})"
    R"(\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556})"
    R"(\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF})"
    R"(\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D})"
    R"(\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D})"
    R"(\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4})"
    R"(\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4})"
    R"(\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124})"
    R"(\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F})"
    R"(\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4})"
    R"(\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F})"
    R"(\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17})"
    R"(\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3})"
    R"(\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF})"
    R"(\x{1E900}-\x{1E943}]+)";

// ASCII punctuation and symbols, their full-width forms, curly quotes, ideographic space and
// punctuation.
constexpr char kDeepSeekLlmPunct[] =
    R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)";

struct FamilyRow {
  std::string_view pre;  // the tokenizer.ggml.pre value
  std::string_view family;
  bool ignore_merges;
  bool add_bos;
};

constexpr std::array kRows = {
    FamilyRow{"gpt-2", "gpt2", false, false},
    FamilyRow{"gpt2", "gpt2", false, false},
    FamilyRow{"phi-2", "gpt2", false, false},
    FamilyRow{"mpt", "gpt2", false, false},
    FamilyRow{"olmo", "gpt2", false, false},
    FamilyRow{"jais", "gpt2", false, false},
    FamilyRow{"roberta-bpe", "gpt2", false, false},
    FamilyRow{"llama3", "llama3", true, true},
    FamilyRow{"llama-v3", "llama3", true, true},
    FamilyRow{"llama-bpe", "llama3", true, true},
    FamilyRow{"falcon3", "llama3", true, true},
    FamilyRow{"dbrx", "llama3", false, false},
    FamilyRow{"smaug-bpe", "llama3", false, false},
    FamilyRow{"qwen2", "qwen2", false, false},
    FamilyRow{"deepseek-r1-qwen", "qwen2", false, false},
    FamilyRow{"stablelm2", "qwen2", false, false},
    FamilyRow{"megrez", "qwen2", false, false},
    FamilyRow{"starcoder", "starcoder", false, false},
    FamilyRow{"refact", "starcoder", false, false},
    FamilyRow{"command-r", "starcoder", false, false},
    FamilyRow{"smollm", "starcoder", false, false},
    FamilyRow{"codeshell", "starcoder", false, false},
    FamilyRow{"exaone", "starcoder", false, false},
    FamilyRow{"minerva-7b", "starcoder", false, false},
    FamilyRow{"falcon", "falcon", false, false},
    FamilyRow{"deepseek-coder", "deepseek-coder", false, false},
    FamilyRow{"deepseek-llm", "deepseek-llm", false, false},
    FamilyRow{"default", "default", false, false},
};

std::vector<std::string> PatternsOf(std::string_view family) {
  if (family == "gpt2") return {kGpt2};
  if (family == "llama3") return {kLlama3};
  if (family == "qwen2") return {kQwen2};
  // StarCoder: every digit alone (HF Digits, individual), then GPT-2's regex.
  if (family == "starcoder") return {R"(\p{N})", kGpt2};
  // Falcon: runs of punctuation (Unicode P plus ASCII symbols), GPT-2's regex, then digits in
  // threes from the left.
  if (family == "falcon") return {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, R"([0-9][0-9][0-9])"};
  if (family == "deepseek-coder") {
    return {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kDeepSeekCjk, R"(\p{N})"};
  }
  if (family == "deepseek-llm") {
    return {R"([\r\n])", kDeepSeekLlmLetters, kDeepSeekLlmPunct,
            R"(\s+$)",   kDeepSeekCjk,        R"(\p{N}+)"};
  }
  // llama.cpp's "default": what older GGUF files without a known pre-tokenizer were made with.
  return {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", R"([0-9][0-9][0-9])"};
}

}  // namespace

shared::Result<PreTokenizerFamily> FindPreTokenizerFamily(std::string_view pre) {
  for (const FamilyRow& row : kRows) {
    if (row.pre != pre) continue;
    PreTokenizerFamily f;
    f.name = std::string(row.family);
    f.patterns = PatternsOf(row.family);
    f.ignore_merges = row.ignore_merges;
    f.add_bos = row.add_bos;
    return f;
  }
  std::string names;
  for (std::string_view n : SupportedPreTokenizerNames()) {
    names += names.empty() ? "" : ", ";
    names += n;
  }
  return shared::NotFound("pre-tokenizer '" + std::string(pre) +
                          "' is not supported (supported: " + names + ")");
}

std::vector<std::string_view> SupportedPreTokenizerNames() {
  std::vector<std::string_view> names;
  for (const FamilyRow& row : kRows) names.push_back(row.pre);
  return names;
}

}  // namespace smallmind::worker
