#include "worker/model/gguf/gguf_vocab.h"

#include <array>
#include <string_view>

#include "worker/tokenizer/bpe_tokenizer.h"
#include "worker/tokenizer/pre_tokenizer_families.h"
#include "worker/tokenizer/spm_tokenizer.h"
#include "worker/tokenizer/wordpiece_tokenizer.h"

namespace smallmind::worker {

namespace {

constexpr char kTokensKey[] = "tokenizer.ggml.tokens";

shared::Status KeyError(const GgufFile& f, std::string_view key, const std::string& what) {
  return shared::InvalidArgument(f.path() + ": " + std::string(key) + ": " + what);
}

// All normal when the key is absent.
shared::Result<std::vector<SpmTokenType>> ReadTokenTypes(const GgufFile& f, size_t n_tokens) {
  constexpr char kKey[] = "tokenizer.ggml.token_type";
  std::vector<SpmTokenType> types(n_tokens, SpmTokenType::kNormal);
  if (f.Find(kKey) == nullptr) return types;
  SM_ASSIGN_OR_RETURN(std::vector<int32_t> raw, f.GetI32Array(kKey));
  if (raw.size() != n_tokens) {
    return KeyError(f, kKey,
                    "has " + std::to_string(raw.size()) + " entries for " +
                        std::to_string(n_tokens) + " tokens");
  }
  for (size_t i = 0; i < raw.size(); ++i) types[i] = static_cast<SpmTokenType>(raw[i]);
  return types;
}

shared::Result<TokenId> OptionalId(const GgufFile& f, const char* key, TokenId fallback) {
  if (f.Find(key) == nullptr) return fallback;
  SM_ASSIGN_OR_RETURN(uint32_t value, f.GetU32(key));
  if (value >= static_cast<uint32_t>(INT32_MAX)) return KeyError(f, key, "id out of range");
  return static_cast<TokenId>(value);
}

shared::Result<bool> OptionalBool(const GgufFile& f, const char* key, bool fallback) {
  if (f.Find(key) == nullptr) return fallback;
  return f.GetBool(key);
}

// Files without tokenizer.ggml.eot_token_id: the first of the usual end-of-turn spellings the
// vocabulary has (Llama 3, ChatML/Qwen, Phi-3, Gemma, GPT-2 style, Granite, CodeLlama).
TokenId FindEotBySpelling(const std::vector<std::string>& tokens) {
  constexpr std::array<std::string_view, 7> kSpellings = {
      "<|eot_id|>",    "<|im_end|>",      "<|end|>", "<end_of_turn>",
      "<|endoftext|>", "<|end_of_text|>", "<EOT>"};
  for (std::string_view spelling : kSpellings) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i] == spelling) return static_cast<TokenId>(i);
    }
  }
  return -1;
}

shared::Result<std::unique_ptr<Tokenizer>> LoadSpm(const GgufFile& f) {
  SpmVocab v;
  SM_ASSIGN_OR_RETURN(v.pieces, f.GetStringArray(kTokensKey));
  if (f.Find("tokenizer.ggml.scores") != nullptr) {
    SM_ASSIGN_OR_RETURN(v.scores, f.GetF32Array("tokenizer.ggml.scores"));
  } else {
    v.scores.assign(v.pieces.size(), 0.0f);
  }
  SM_ASSIGN_OR_RETURN(v.types, ReadTokenTypes(f, v.pieces.size()));
  SM_ASSIGN_OR_RETURN(v.bos_id, OptionalId(f, "tokenizer.ggml.bos_token_id", 1));
  SM_ASSIGN_OR_RETURN(v.eos_id, OptionalId(f, "tokenizer.ggml.eos_token_id", 2));
  SM_ASSIGN_OR_RETURN(v.unk_id, OptionalId(f, "tokenizer.ggml.unknown_token_id", 0));
  SM_ASSIGN_OR_RETURN(v.add_bos, OptionalBool(f, "tokenizer.ggml.add_bos_token", true));
  SM_ASSIGN_OR_RETURN(v.add_space_prefix, OptionalBool(f, "tokenizer.ggml.add_space_prefix", true));
  auto tok = SpmTokenizer::Create(std::move(v));
  if (!tok.ok()) return shared::InvalidArgument(f.path() + ": " + tok.status().message());
  return std::unique_ptr<Tokenizer>(std::move(tok).value());
}

shared::Result<std::unique_ptr<Tokenizer>> LoadBpe(const GgufFile& f) {
  BpeVocab v;
  SM_ASSIGN_OR_RETURN(v.tokens, f.GetStringArray(kTokensKey));
  SM_ASSIGN_OR_RETURN(v.types, ReadTokenTypes(f, v.tokens.size()));
  SM_ASSIGN_OR_RETURN(v.merges, f.GetStringArray("tokenizer.ggml.merges"));
  std::string pre = "default";  // llama.cpp's choice for files written before the key existed
  if (f.Find("tokenizer.ggml.pre") != nullptr) {
    SM_ASSIGN_OR_RETURN(pre, f.GetString("tokenizer.ggml.pre"));
  }
  auto family = FindPreTokenizerFamily(pre);
  if (!family.ok()) return KeyError(f, "tokenizer.ggml.pre", family.status().message());
  v.pre = std::move(family).value();
  SM_ASSIGN_OR_RETURN(v.bos_id, OptionalId(f, "tokenizer.ggml.bos_token_id", -1));
  SM_ASSIGN_OR_RETURN(v.eos_id, OptionalId(f, "tokenizer.ggml.eos_token_id", -1));
  SM_ASSIGN_OR_RETURN(v.eot_id, OptionalId(f, "tokenizer.ggml.eot_token_id", -1));
  if (v.eot_id < 0) v.eot_id = FindEotBySpelling(v.tokens);
  SM_ASSIGN_OR_RETURN(v.add_bos, OptionalBool(f, "tokenizer.ggml.add_bos_token", v.pre.add_bos));
  SM_ASSIGN_OR_RETURN(v.add_eos, OptionalBool(f, "tokenizer.ggml.add_eos_token", false));
  auto tok = BpeTokenizer::Create(std::move(v));
  if (!tok.ok()) return shared::InvalidArgument(f.path() + ": " + tok.status().message());
  return std::unique_ptr<Tokenizer>(std::move(tok).value());
}

// BERT's special tokens by their keys (llama.cpp's defaults when a key is absent: [UNK] 100,
// [CLS] 101, [SEP] 102, [PAD] 0, [MASK] 103, bert-base-uncased's ids); [CLS] is bos_token_id when
// the file has one, as llama.cpp reads it.
shared::Result<std::unique_ptr<Tokenizer>> LoadWordPiece(const GgufFile& f) {
  WordPieceVocab v;
  SM_ASSIGN_OR_RETURN(v.tokens, f.GetStringArray(kTokensKey));
  SM_ASSIGN_OR_RETURN(v.unk_id, OptionalId(f, "tokenizer.ggml.unknown_token_id", 100));
  // llama.cpp starts a BERT input with its BOS: bos_token_id when present, else [CLS] (101).
  SM_ASSIGN_OR_RETURN(v.cls_id, OptionalId(f, "tokenizer.ggml.cls_token_id", 101));
  SM_ASSIGN_OR_RETURN(v.cls_id, OptionalId(f, "tokenizer.ggml.bos_token_id", v.cls_id));
  SM_ASSIGN_OR_RETURN(v.sep_id, OptionalId(f, "tokenizer.ggml.seperator_token_id", 102));
  SM_ASSIGN_OR_RETURN(v.pad_id, OptionalId(f, "tokenizer.ggml.padding_token_id", 0));
  SM_ASSIGN_OR_RETURN(v.mask_id, OptionalId(f, "tokenizer.ggml.mask_token_id", 103));
  // A reranker's pair specials (llama.cpp's WPM defaults: no EOS, add BOS and SEP, not EOS).
  SM_ASSIGN_OR_RETURN(v.eos_id, OptionalId(f, "tokenizer.ggml.eos_token_id", -1));
  SM_ASSIGN_OR_RETURN(v.add_bos, OptionalBool(f, "tokenizer.ggml.add_bos_token", true));
  SM_ASSIGN_OR_RETURN(v.add_eos, OptionalBool(f, "tokenizer.ggml.add_eos_token", false));
  SM_ASSIGN_OR_RETURN(v.add_sep, OptionalBool(f, "tokenizer.ggml.add_sep_token", true));
  auto tok = WordPieceTokenizer::Create(std::move(v));
  if (!tok.ok()) return shared::InvalidArgument(f.path() + ": " + tok.status().message());
  return std::unique_ptr<Tokenizer>(std::move(tok).value());
}

}  // namespace

shared::Result<std::unique_ptr<Tokenizer>> GgufTokenizer(const GgufFile& f) {
  SM_ASSIGN_OR_RETURN(std::string model, f.GetString("tokenizer.ggml.model"));
  if (model == "llama") return LoadSpm(f);
  if (model == "gpt2") return LoadBpe(f);
  if (model == "bert") return LoadWordPiece(f);
  return KeyError(f, "tokenizer.ggml.model",
                  "'" + model + "' is not supported (supported: llama, gpt2, bert)");
}

}  // namespace smallmind::worker
