#include "worker/model/gguf_vocab.h"

#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {

shared::Result<std::unique_ptr<Tokenizer>> GgufTokenizer(const GgufFile& f) {
  SM_ASSIGN_OR_RETURN(std::string model, f.GetString("tokenizer.ggml.model"));
  if (model != "llama") {
    return shared::InvalidArgument(f.path() + ": tokenizer.ggml.model '" + model +
                                   "' is not supported yet (supported: llama)");
  }
  SpmVocab v;
  SM_ASSIGN_OR_RETURN(v.pieces, f.GetStringArray("tokenizer.ggml.tokens"));
  if (f.Find("tokenizer.ggml.scores") != nullptr) {
    SM_ASSIGN_OR_RETURN(v.scores, f.GetF32Array("tokenizer.ggml.scores"));
  } else {
    v.scores.assign(v.pieces.size(), 0.0f);
  }
  v.types.assign(v.pieces.size(), SpmTokenType::kNormal);
  if (f.Find("tokenizer.ggml.token_type") != nullptr) {
    SM_ASSIGN_OR_RETURN(std::vector<int32_t> types, f.GetI32Array("tokenizer.ggml.token_type"));
    if (types.size() != v.pieces.size()) {
      return shared::InvalidArgument(f.path() + ": tokenizer.ggml.token_type has " +
                                     std::to_string(types.size()) + " entries for " +
                                     std::to_string(v.pieces.size()) + " tokens");
    }
    for (size_t i = 0; i < types.size(); ++i) v.types[i] = static_cast<SpmTokenType>(types[i]);
  }
  auto id = [&](const char* key, TokenId fallback) -> shared::Result<TokenId> {
    if (f.Find(key) == nullptr) return fallback;
    SM_ASSIGN_OR_RETURN(uint32_t value, f.GetU32(key));
    return static_cast<TokenId>(value);
  };
  SM_ASSIGN_OR_RETURN(v.bos_id, id("tokenizer.ggml.bos_token_id", 1));
  SM_ASSIGN_OR_RETURN(v.eos_id, id("tokenizer.ggml.eos_token_id", 2));
  SM_ASSIGN_OR_RETURN(v.unk_id, id("tokenizer.ggml.unknown_token_id", 0));
  if (f.Find("tokenizer.ggml.add_bos_token") != nullptr) {
    SM_ASSIGN_OR_RETURN(v.add_bos, f.GetBool("tokenizer.ggml.add_bos_token"));
  }
  if (f.Find("tokenizer.ggml.add_space_prefix") != nullptr) {
    SM_ASSIGN_OR_RETURN(v.add_space_prefix, f.GetBool("tokenizer.ggml.add_space_prefix"));
  }
  auto tok = SpmTokenizer::Create(std::move(v));
  if (!tok.ok()) return shared::InvalidArgument(f.path() + ": " + tok.status().message());
  return std::unique_ptr<Tokenizer>(std::move(tok).value());
}

}  // namespace smallmind::worker
