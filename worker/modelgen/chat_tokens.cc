#include "worker/modelgen/chat_tokens.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace smallmind::worker {
namespace {

bool IsNameChar(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_'; }

// A token's text must be a whole piece a prompt can spell: non-empty, no space (stored as U+2581
// it would never match raw text) and no control character.
shared::Status CheckTokenText(const char* what, const std::string& text) {
  const bool printable = std::none_of(text.begin(), text.end(), [](char ch) {
    return ch == ' ' || std::iscntrl(static_cast<unsigned char>(ch)) != 0;
  });
  if (!text.empty() && printable) return shared::Status::Ok();
  return shared::InvalidArgument(std::string(what) + " '" + text +
                                 "' must be non-empty text without spaces or control characters");
}

// The id of the piece spelled `text`, or -1.
TokenId FindPiece(const SpmVocab& v, const std::string& text) {
  const auto it = std::find(v.pieces.begin(), v.pieces.end(), text);
  return it == v.pieces.end() ? -1 : static_cast<TokenId>(it - v.pieces.begin());
}

// Respells the control token at `id` (BOS or EOS) as `text`.
shared::Status Respell(const char* what, TokenId id, const std::string& text, SpmVocab* v,
                       std::vector<std::string>* notes) {
  if (text.empty()) return shared::Status::Ok();
  SM_RETURN_IF_ERROR(CheckTokenText(what, text));
  if (id < 0) return shared::InvalidArgument(std::string("the vocabulary has no ") + what);
  const TokenId existing = FindPiece(*v, text);
  if (existing >= 0 && existing != id) {
    return shared::InvalidArgument(std::string(what) + " '" + text + "' is already token " +
                                   std::to_string(existing));
  }
  notes->push_back(std::string(what) + " " + std::to_string(id) + " spelled " + text);
  v->pieces[id] = text;
  return shared::Status::Ok();
}

}  // namespace

std::vector<std::string> TemplateSpecialTokens(std::string_view source) {
  std::vector<std::string> tokens;
  for (size_t at = source.find("<|"); at != std::string_view::npos;
       at = source.find("<|", at + 1)) {
    size_t end = at + 2;
    while (end < source.size() && IsNameChar(source[end])) ++end;
    if (end == at + 2 || source.substr(end, 2) != "|>") continue;
    std::string token(source.substr(at, end + 2 - at));
    if (std::find(tokens.begin(), tokens.end(), token) == tokens.end()) tokens.push_back(token);
  }
  return tokens;
}

shared::Result<std::vector<std::string>> ApplyChatTokens(const ChatTokens& tokens, SpmVocab* v) {
  std::vector<std::string> notes;
  if (!tokens.bos.empty() && tokens.bos == tokens.eos) {
    return shared::InvalidArgument("BOS and EOS must be spelled differently ('" + tokens.bos +
                                   "')");
  }
  SM_RETURN_IF_ERROR(Respell("BOS", v->bos_id, tokens.bos, v, &notes));
  SM_RETURN_IF_ERROR(Respell("EOS", v->eos_id, tokens.eos, v, &notes));
  std::vector<std::string> added;  // texts the vocabulary lacks, in order
  for (const std::string& text : tokens.specials) {
    SM_RETURN_IF_ERROR(CheckTokenText("special token", text));
    const TokenId id = FindPiece(*v, text);
    if (id >= 0 && v->types[id] == SpmTokenType::kNormal) {
      return shared::InvalidArgument("special token '" + text + "' is already the normal piece " +
                                     std::to_string(id) + " of the vocabulary");
    }
    if (id < 0 && std::find(added.begin(), added.end(), text) == added.end()) {
      added.push_back(text);
    }
  }
  std::vector<TokenId> free_ids;  // the last normal pieces, ascending
  for (TokenId id = static_cast<TokenId>(v->pieces.size()) - 1;
       id >= 0 && free_ids.size() < added.size(); --id) {
    if (v->types[id] == SpmTokenType::kNormal) free_ids.insert(free_ids.begin(), id);
  }
  if (free_ids.size() < added.size()) {
    return shared::InvalidArgument(
        std::to_string(added.size()) + " special tokens need as many normal pieces to replace; " +
        "the vocabulary has " + std::to_string(free_ids.size()) + " (a larger --vocab has more)");
  }
  std::string note = "special tokens in the last normal pieces' ids:";
  for (size_t i = 0; i < added.size(); ++i) {
    const TokenId id = free_ids[i];
    note += (i ? ", " : " ") + std::to_string(id) + " " + added[i];
    v->pieces[id] = added[i];
    v->types[id] = SpmTokenType::kControl;
    v->scores[id] = 0.0f;
  }
  if (!added.empty()) notes.push_back(std::move(note));
  return notes;
}

}  // namespace smallmind::worker
