#include "worker/tokenizer/pre_tokenizer_families.h"

#include <array>

namespace smallmind::worker {

namespace {

// The regexes are the ones in each model's Hugging Face tokenizer.json (the reference its
// vocabulary's expected ids come from); llama.cpp's llama-vocab lists the same ones, sometimes
// rewritten for its own regex engine. PCRE2 takes the originals as they are. Non-ASCII characters
// are written as \x{...} code points.

// GPT-2's ByteLevel regex: contractions, optionally space-led runs of letters / numbers / other
// symbols, then whitespace (a run before a word leaves its last space to that word).
constexpr char kGpt2[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Llama 3 (tiktoken cl100k_base; also DBRX, Phi-4, OLMo 2, GLM-4): case-insensitive contractions,
// a letter run may take one leading non-letter, digits in groups of at most three, newlines kept
// with symbols.
constexpr char kLlama3[] = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})"
                           R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Qwen2 (Qwen 1.5 to Qwen 3): Llama 3's regex with every digit on its own.
constexpr char kQwen2[] = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
                          R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Qwen 3.5: Qwen2's regex with combining marks (\p{M}) kept inside words.
constexpr char kQwen35[] = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N})"
                           R"(| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Mistral Tekken (Mistral NeMo, Mistral Small 3): words split at case changes, as tiktoken's
// o200k_base does: an optional leading non-letter, then upper-case-like letters followed by
// lower-case-like ones, so "camelCase" is "camel" "Case" and "HTTPServer" stays whole
// (titlecase, modifier and other letters and combining marks count on whichever side needs them);
// every digit alone; symbols take trailing newlines and slashes.
constexpr char kTekken[] =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*)"
    R"(|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// tiktoken o200k_base (GPT-4o; Phi-4-mini, gpt-oss's o200k_harmony, Llama 4): Tekken's case-split
// words, each of which may end in a case-insensitive contraction; digits in groups of at most
// three.
constexpr char kGpt4o[] =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+)"
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*)"
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

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

// DeepSeek V3 / R1: CJK ideographs and kana apart; an ASCII symbol may lead an ASCII word, any
// other word takes one leading non-letter, non-symbol character.
constexpr char kDeepSeekV3Kana[] = R"([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)";
constexpr char kDeepSeekV3Words[] =
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+)"
    R"(| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum class Family {
  kGpt2,
  kLlama3,
  kQwen2,
  kQwen35,
  kTekken,
  kGpt4o,
  kStarcoder,
  kFalcon,
  kDeepSeekCoder,
  kDeepSeekLlm,
  kDeepSeekV3,
  kDefault,
};

struct FamilyRow {
  std::string_view pre;  // the tokenizer.ggml.pre value
  Family family;
  bool ignore_merges;  // llama.cpp's per-value flags (llama-vocab.cpp, llama_vocab::impl::load)
  bool add_bos;
};

// Every value llama.cpp maps to one of the families above, with its flags; the models of each
// family are in kFamilyNames' comments.
constexpr std::array kRows = {
    FamilyRow{"gpt-2", Family::kGpt2, false, false},
    FamilyRow{"gpt2", Family::kGpt2, false, false},
    FamilyRow{"phi-2", Family::kGpt2, false, false},
    FamilyRow{"mpt", Family::kGpt2, false, false},
    FamilyRow{"olmo", Family::kGpt2, false, false},
    FamilyRow{"jais", Family::kGpt2, false, false},
    FamilyRow{"roberta-bpe", Family::kGpt2, false, false},
    FamilyRow{"gigachat", Family::kGpt2, false, false},
    FamilyRow{"a.x-4.0", Family::kGpt2, false, false},
    FamilyRow{"mellum", Family::kGpt2, false, false},
    FamilyRow{"exaone4", Family::kGpt2, false, false},
    FamilyRow{"trillion", Family::kGpt2, false, false},
    FamilyRow{"granite-docling", Family::kGpt2, false, false},
    FamilyRow{"llama3", Family::kLlama3, true, true},
    FamilyRow{"llama-v3", Family::kLlama3, true, true},
    FamilyRow{"llama-bpe", Family::kLlama3, true, true},
    FamilyRow{"falcon3", Family::kLlama3, true, true},
    FamilyRow{"falcon-h1", Family::kLlama3, true, true},
    FamilyRow{"pixtral", Family::kLlama3, true, true},
    FamilyRow{"midm-2.0", Family::kLlama3, true, true},
    FamilyRow{"lfm2", Family::kLlama3, true, true},
    FamilyRow{"dbrx", Family::kLlama3, false, false},
    FamilyRow{"smaug-bpe", Family::kLlama3, false, false},
    FamilyRow{"chatglm-bpe", Family::kLlama3, false, false},
    FamilyRow{"glm4", Family::kLlama3, false, false},
    FamilyRow{"qwen2", Family::kQwen2, false, false},
    FamilyRow{"deepseek-r1-qwen", Family::kQwen2, false, false},
    FamilyRow{"stablelm2", Family::kQwen2, false, false},
    FamilyRow{"megrez", Family::kQwen2, false, false},
    FamilyRow{"kormo", Family::kQwen2, false, false},
    FamilyRow{"hunyuan", Family::kQwen2, false, false},
    FamilyRow{"grok-2", Family::kQwen2, false, false},
    FamilyRow{"solar-open", Family::kQwen2, false, false},
    FamilyRow{"qwen35", Family::kQwen35, false, false},
    FamilyRow{"tekken", Family::kTekken, true, true},
    FamilyRow{"gpt-4o", Family::kGpt4o, false, false},
    FamilyRow{"llama4", Family::kGpt4o, false, false},
    FamilyRow{"kanana2", Family::kGpt4o, false, false},
    FamilyRow{"minimax-m2", Family::kGpt4o, false, false},
    FamilyRow{"starcoder", Family::kStarcoder, false, false},
    FamilyRow{"refact", Family::kStarcoder, false, false},
    FamilyRow{"command-r", Family::kStarcoder, false, false},
    FamilyRow{"smollm", Family::kStarcoder, false, false},
    FamilyRow{"codeshell", Family::kStarcoder, false, false},
    FamilyRow{"exaone", Family::kStarcoder, false, false},
    FamilyRow{"minerva-7b", Family::kStarcoder, false, false},
    FamilyRow{"mellum2", Family::kStarcoder, false, false},
    FamilyRow{"falcon", Family::kFalcon, false, false},
    FamilyRow{"deepseek-coder", Family::kDeepSeekCoder, false, false},
    FamilyRow{"deepseek-llm", Family::kDeepSeekLlm, false, false},
    FamilyRow{"deepseek-v3", Family::kDeepSeekV3, false, false},
    FamilyRow{"hunyuan-dense", Family::kDeepSeekV3, false, false},
    FamilyRow{"joyai-llm", Family::kDeepSeekV3, false, false},
    FamilyRow{"default", Family::kDefault, false, false},
};

// PreTokenizerFamily::name of each family.
std::string_view FamilyName(Family family) {
  switch (family) {
    case Family::kGpt2: return "gpt2";            // GPT-2, GPT-NeoX / MPT, OLMo 1, Granite Docling
    case Family::kLlama3: return "llama3";        // Llama 3.x, DBRX, Phi-4, OLMo 2, SmolLM3, GLM-4
    case Family::kQwen2: return "qwen2";          // Qwen 1.5 / 2 / 2.5 / 3, Qwen3-MoE, StableLM 2
    case Family::kQwen35: return "qwen35";        // Qwen 3.5
    case Family::kTekken: return "tekken";        // Mistral NeMo, Mistral Small 3
    case Family::kGpt4o: return "gpt4o";          // Phi-4-mini, gpt-oss, Llama 4
    case Family::kStarcoder: return "starcoder";  // StarCoder 2, SmolLM 1/2, Granite 3, Command-R
    case Family::kFalcon: return "falcon";
    case Family::kDeepSeekCoder: return "deepseek-coder";
    case Family::kDeepSeekLlm: return "deepseek-llm";
    case Family::kDeepSeekV3: return "deepseek-v3";  // DeepSeek V3 / R1
    case Family::kDefault: return "default";
  }
  return "default";
}

std::vector<std::string> PatternsOf(Family family) {
  switch (family) {
    case Family::kGpt2: return {kGpt2};
    case Family::kLlama3: return {kLlama3};
    case Family::kQwen2: return {kQwen2};
    case Family::kQwen35: return {kQwen35};
    case Family::kTekken: return {kTekken};
    case Family::kGpt4o: return {kGpt4o};
    // StarCoder: every digit alone (HF Digits, individual), then GPT-2's regex.
    case Family::kStarcoder: return {R"(\p{N})", kGpt2};
    // Falcon: runs of punctuation (Unicode P plus ASCII symbols), GPT-2's regex, then digits in
    // threes from the left.
    case Family::kFalcon: return {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, R"([0-9][0-9][0-9])"};
    case Family::kDeepSeekCoder:
      return {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kDeepSeekCjk, R"(\p{N})"};
    case Family::kDeepSeekLlm:
      return {R"([\r\n])", kDeepSeekLlmLetters, kDeepSeekLlmPunct,
              R"(\s+$)",   kDeepSeekCjk,        R"(\p{N}+)"};
    case Family::kDeepSeekV3: return {R"(\p{N}{1,3})", kDeepSeekV3Kana, kDeepSeekV3Words};
    // llama.cpp's "default": what older GGUF files without a known pre-tokenizer were made with.
    case Family::kDefault:
      return {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", R"([0-9][0-9][0-9])"};
  }
  return {};
}

}  // namespace

shared::Result<PreTokenizerFamily> FindPreTokenizerFamily(std::string_view pre) {
  for (const FamilyRow& row : kRows) {
    if (row.pre != pre) continue;
    PreTokenizerFamily f;
    f.name = std::string(FamilyName(row.family));
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
