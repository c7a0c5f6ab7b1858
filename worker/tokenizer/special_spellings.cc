#include "worker/tokenizer/special_spellings.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "worker/tokenizer/spm_tokenizer.h"  // SpmTokenType

namespace smallmind::worker {

namespace {

// Spellings llama.cpp treats as ending generation (llama-vocab.cpp, "special_eog_ids").
constexpr std::array<std::string_view, 22> kEndOfGeneration = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",  // DeepSeek's
    "[e~[",
};

// Fill-in-the-middle spellings (prefix, suffix, middle, pad, repository, file separator).
constexpr std::array<std::string_view, 30> kFillInTheMiddle = {"<|fim_prefix|>",
                                                               "<fim-prefix>",
                                                               "<fim_prefix>",
                                                               "<PRE>",
                                                               "\xE2\x96\x81<PRE>",
                                                               "<|code_prefix|>",
                                                               "<|prefix|>",
                                                               "<|fim_suffix|>",
                                                               "<fim-suffix>",
                                                               "<fim_suffix>",
                                                               "<SUF>",
                                                               "\xE2\x96\x81<SUF>",
                                                               "<|code_suffix|>",
                                                               "<|suffix|>",
                                                               "<|fim_middle|>",
                                                               "<fim-middle>",
                                                               "<fim_middle>",
                                                               "<MID>",
                                                               "\xE2\x96\x81<MID>",
                                                               "<|code_middle|>",
                                                               "<|middle|>",
                                                               "<|fim_pad|>",
                                                               "<fim-pad>",
                                                               "<fim_pad>",
                                                               "<|fim_repo|>",
                                                               "<|repo_name|>",
                                                               "<fim-repo>",
                                                               "<REPO>",
                                                               "<reponame>",
                                                               "<|file_sep|>"};

// gpt-oss's harmony structure tokens, which its chat parser must see in the output.
constexpr std::array<std::string_view, 4> kHarmonyText = {"<|start|>", "<|message|>", "<|channel|>",
                                                          "<|constrain|>"};

template <size_t N>
bool OneOf(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// Only bracketed spellings can be special: skips the hash of almost every ordinary token.
bool MaybeSpecial(const std::string& t) {
  return t.size() >= 4 &&
         (t.front() == '<' || t.front() == '[' || t.front() == '_' || t.front() == '\xE2');
}

bool IsHarmony(const std::vector<std::string>& tokens) {
  bool has_return = false;
  bool has_call = false;
  for (const std::string& t : tokens) {
    has_return = has_return || t == "<|return|>";
    has_call = has_call || t == "<|call|>";
  }
  return has_return && has_call;
}

}  // namespace

TokenId FindEndOfTurn(const std::vector<std::string>& tokens) {
  constexpr std::array<std::string_view, 7> kSpellings = {
      "<|eot_id|>",    "<|im_end|>",      "<|end|>", "<end_of_turn>",
      "<|endoftext|>", "<|end_of_text|>", "<EOT>"};
  const bool harmony = IsHarmony(tokens);
  // One pass: the best (earliest in kSpellings) spelling seen so far and its first id.
  size_t best = kSpellings.size();
  TokenId id = -1;
  for (size_t i = 0; i < tokens.size() && best > 0; ++i) {
    const std::string& t = tokens[i];
    if (!MaybeSpecial(t)) continue;
    if (harmony) {
      if (t == "<|call|>") return static_cast<TokenId>(i);
      continue;
    }
    for (size_t k = 0; k < best; ++k) {
      if (t == kSpellings[k]) {
        best = k;
        id = static_cast<TokenId>(i);
        break;
      }
    }
  }
  return id;
}

TokenId ApplySpecialSpellings(const std::vector<std::string>& tokens,
                              std::vector<SpmTokenType>* types, TokenId eot) {
  const bool known = eot >= 0 && static_cast<size_t>(eot) < types->size();
  const SpmTokenType before = known ? (*types)[eot] : SpmTokenType::kNormal;
  OverrideTypesBySpelling(tokens, types);
  if (known &&
      !(before != SpmTokenType::kUserDefined && (*types)[eot] == SpmTokenType::kUserDefined)) {
    return eot;
  }
  return FindEndOfTurn(tokens);
}

void OverrideTypesBySpelling(const std::vector<std::string>& tokens,
                             std::vector<SpmTokenType>* types) {
  const bool harmony = IsHarmony(tokens);
  for (size_t i = 0; i < tokens.size() && i < types->size(); ++i) {
    const std::string& t = tokens[i];
    if (!MaybeSpecial(t)) continue;
    SpmTokenType& type = (*types)[i];
    if (OneOf(t, kHarmonyText) || (harmony && t == "<|end|>")) {
      type = SpmTokenType::kUserDefined;
    } else if (OneOf(t, kEndOfGeneration) || OneOf(t, kFillInTheMiddle)) {
      type = SpmTokenType::kControl;
    }
  }
}

}  // namespace smallmind::worker
