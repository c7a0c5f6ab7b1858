#include "gateway/jinja/lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;
using shared::Result;
using shared::Status;

enum class TagKind { kVariable, kBlock, kComment, kRaw };

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(unsigned char c) { return c == '_' || std::isalpha(c) || c >= 0x80; }
bool IsNameChar(unsigned char c) { return IsNameStart(c) || IsDigit(static_cast<char>(c)); }

// jinja2 3.x treats \r\n, \r and \n as line breaks, writes them all as \n, and (with
// keep_trailing_newline=False) drops one line break at the very end.
std::string NormalizeNewlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Length of the run of Python whitespace (\s) starting at `pos`.
size_t WhitespaceRun(std::string_view s, size_t pos) {
  size_t i = pos;
  while (i < s.size()) {
    size_t next = i;
    if (!unicode::IsSpace(unicode::Next(s, next))) break;
    i = next;
  }
  return i - pos;
}

bool AllWhitespace(std::string_view s) { return !s.empty() && WhitespaceRun(s, 0) == s.size(); }

class Lexer {
 public:
  explicit Lexer(std::string source) : src_(std::move(source)) {}
  Result<std::vector<Token>> Run();

 private:
  Status Fail(const std::string& message) const {
    return InvalidArgument("line " + std::to_string(line_) + ": " + message);
  }
  void Emit(TokenType type, std::string text = {}) {
    Token t;
    t.type = type;
    t.text = std::move(text);
    t.line = line_;
    tokens_.push_back(std::move(t));
  }
  void Advance(size_t to) {
    for (size_t i = pos_; i < to; ++i) line_ += src_[i] == '\n';
    pos_ = to;
  }
  // Emits the data before a tag after applying the tag's whitespace control.
  void EmitData(std::string_view text, char sign, bool lstrip_allowed);
  // Consumes a tag's end marker at pos_ when present; `suffix_newline` is trim_blocks.
  bool MatchTagEnd(std::string_view end, bool suffix_newline, bool allow_plus = true);
  bool FindRootTag(size_t& at, TagKind& kind, char& sign, size_t& tag_len) const;
  Status LexTag(TagKind kind);
  Status LexComment();
  Status LexRaw();
  Status LexToken();
  Status LexNumber();
  Status LexOperator();
  std::optional<size_t> MatchNumber(bool& is_float) const;
  Status LexString();

  std::string src_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<char> brackets_;  // expected closing brackets inside a tag
  std::vector<Token> tokens_;
};

void Lexer::EmitData(std::string_view text, char sign, bool lstrip_allowed) {
  std::string_view kept = text;
  if (sign == '-') {
    size_t end = text.size();
    while (end > 0) {
      size_t start = end - 1;
      while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
      size_t probe = start;
      if (!unicode::IsSpace(unicode::Next(text, probe))) break;
      end = start;
    }
    kept = text.substr(0, end);
  } else if (sign != '+' && lstrip_allowed) {
    const size_t nl = text.rfind('\n');
    const size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
    if ((l_pos > 0 || line_starting_) && AllWhitespace(text.substr(l_pos))) {
      kept = text.substr(0, l_pos);
    }
  }
  if (!kept.empty()) Emit(TokenType::kData, std::string(kept));
}

bool Lexer::MatchTagEnd(std::string_view end, bool suffix_newline, bool allow_plus) {
  std::string_view rest = std::string_view(src_).substr(pos_);
  if (allow_plus && rest.size() > end.size() && rest[0] == '+' &&
      rest.substr(1, end.size()) == end) {
    Advance(pos_ + 1 + end.size());
    line_starting_ = false;
    return true;
  }
  if (rest.size() > end.size() && rest[0] == '-' && rest.substr(1, end.size()) == end) {
    size_t after = pos_ + 1 + end.size();
    after += WhitespaceRun(src_, after);
    line_starting_ = src_[after - 1] == '\n';
    Advance(after);
    return true;
  }
  if (rest.substr(0, end.size()) == end) {
    size_t after = pos_ + end.size();
    if (suffix_newline && after < src_.size() && src_[after] == '\n') ++after;
    line_starting_ = src_[after - 1] == '\n';
    Advance(after);
    return true;
  }
  return false;
}

// Finds the first "{{", "{%" or "{#" at or after pos_, telling a {% raw %} opener apart.
bool Lexer::FindRootTag(size_t& at, TagKind& kind, char& sign, size_t& tag_len) const {
  for (size_t i = src_.find('{', pos_); i != std::string::npos; i = src_.find('{', i + 1)) {
    if (i + 1 >= src_.size()) return false;
    const char c = src_[i + 1];
    if (c != '{' && c != '%' && c != '#') continue;
    at = i;
    size_t p = i + 2;
    sign = 0;
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) sign = src_[p++];
    tag_len = p - i;
    kind = c == '{' ? TagKind::kVariable : c == '#' ? TagKind::kComment : TagKind::kBlock;
    if (kind == TagKind::kBlock) {
      // {%(-|+|)\s*raw\s*(-%}\s*|%})
      std::string_view s(src_);
      size_t q = p + WhitespaceRun(s, p);
      if (s.substr(q, 3) == "raw") {
        q += 3;
        q += WhitespaceRun(s, q);
        if (s.substr(q, 3) == "-%}") {
          q += 3;
          q += WhitespaceRun(s, q);
        } else if (s.substr(q, 2) == "%}") {
          q += 2;
        } else {
          return true;
        }
        kind = TagKind::kRaw;
        tag_len = q - i;
      }
    }
    return true;
  }
  return false;
}

Result<std::vector<Token>> Lexer::Run() {
  while (pos_ < src_.size()) {
    size_t at = 0;
    TagKind kind = TagKind::kBlock;
    char sign = 0;
    size_t tag_len = 0;
    if (!FindRootTag(at, kind, sign, tag_len)) {
      Emit(TokenType::kData, src_.substr(pos_));
      Advance(src_.size());
      break;
    }
    const std::string_view text = std::string_view(src_).substr(pos_, at - pos_);
    EmitData(text, sign, kind != TagKind::kVariable);
    Advance(at + tag_len);
    line_starting_ = false;
    switch (kind) {
      case TagKind::kVariable:
        Emit(TokenType::kVariableBegin);
        SM_RETURN_IF_ERROR(LexTag(kind));
        break;
      case TagKind::kBlock:
        Emit(TokenType::kBlockBegin);
        SM_RETURN_IF_ERROR(LexTag(kind));
        break;
      case TagKind::kComment: SM_RETURN_IF_ERROR(LexComment()); break;
      case TagKind::kRaw:
        line_starting_ = src_[pos_ - 1] == '\n';
        SM_RETURN_IF_ERROR(LexRaw());
        break;
    }
  }
  Emit(TokenType::kEof);
  return std::move(tokens_);
}

Status Lexer::LexTag(TagKind kind) {
  const bool block = kind == TagKind::kBlock;
  while (true) {
    if (brackets_.empty() && MatchTagEnd(block ? "%}" : "}}", block, block)) {
      Emit(block ? TokenType::kBlockEnd : TokenType::kVariableEnd);
      return Status::Ok();
    }
    if (pos_ >= src_.size()) {
      // jinja2 stops here too; the parser reports the missing end of the tag.
      return Status::Ok();
    }
    const size_t ws = WhitespaceRun(src_, pos_);
    if (ws > 0) {
      Advance(pos_ + ws);
      continue;
    }
    SM_RETURN_IF_ERROR(LexToken());
  }
}

Status Lexer::LexComment() {
  const int start_line = line_;
  for (size_t i = src_.find("#}", pos_); i != std::string::npos; i = src_.find("#}", i + 1)) {
    // The earliest of "+#}", "-#}" or "#}" wins, as jinja2's non-greedy regex does.
    size_t end_at = i;
    if (i > pos_ && (src_[i - 1] == '+' || src_[i - 1] == '-')) end_at = i - 1;
    Advance(end_at);
    MatchTagEnd("#}", true);
    return Status::Ok();
  }
  line_ = start_line;
  return Fail("Missing end of comment tag");
}

Status Lexer::LexRaw() {
  // (.*?)({%(-|+|)\s*endraw\s*(+%}|-%}\s*|%}\n?)
  std::string_view s(src_);
  for (size_t i = src_.find("{%", pos_); i != std::string::npos; i = src_.find("{%", i + 1)) {
    size_t p = i + 2;
    char sign = 0;
    if (p < s.size() && (s[p] == '-' || s[p] == '+')) sign = s[p++];
    p += WhitespaceRun(s, p);
    if (s.substr(p, 6) != "endraw") continue;
    p += 6;
    p += WhitespaceRun(s, p);
    if (s.substr(p, 3) != "+%}" && s.substr(p, 3) != "-%}" && s.substr(p, 2) != "%}") continue;
    EmitData(s.substr(pos_, i - pos_), sign, true);
    Advance(p);
    MatchTagEnd("%}", true);
    return Status::Ok();
  }
  return Fail("Missing end of raw directive");
}

std::optional<size_t> Lexer::MatchNumber(bool& is_float) const {
  std::string_view s(src_);
  auto digits = [&](size_t p) {  // (\d+_)*\d+
    size_t q = p;
    while (true) {
      const size_t run_start = q;
      while (q < s.size() && IsDigit(s[q])) ++q;
      if (q == run_start) return p == q ? p : std::string_view::npos;
      if (q + 1 < s.size() && s[q] == '_' && IsDigit(s[q + 1])) {
        ++q;
        continue;
      }
      return q;
    }
  };
  const size_t p = pos_;
  size_t int_end = digits(p);
  if (int_end == std::string_view::npos || int_end == p) return std::nullopt;
  if (p > 0 && s[p - 1] == '.') {  // float_re's (?<!\.): `x.0` is an attribute, not a float
    is_float = false;
    return int_end;
  }
  size_t q = int_end;
  bool has_fraction = false;
  if (q + 1 < s.size() && s[q] == '.' && IsDigit(s[q + 1])) {
    q = digits(q + 1);
    has_fraction = true;
  }
  if (q < s.size() && (s[q] == 'e' || s[q] == 'E')) {
    size_t e = q + 1;
    if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
    const size_t e_end = digits(e);
    if (e_end != std::string_view::npos && e_end > e) {
      is_float = true;
      return e_end;
    }
  }
  is_float = has_fraction;
  return has_fraction ? q : int_end;
}

Status Lexer::LexToken() {
  const char c = src_[pos_];
  if (IsDigit(c)) return LexNumber();
  if (IsNameStart(static_cast<unsigned char>(c))) {
    size_t q = pos_;
    while (q < src_.size() && IsNameChar(static_cast<unsigned char>(src_[q]))) ++q;
    Emit(TokenType::kName, src_.substr(pos_, q - pos_));
    Advance(q);
    return Status::Ok();
  }
  if (c == '\'' || c == '"') return LexString();
  return LexOperator();
}

// 0b/0o/0x integers (single underscores between digits), then decimal integers and floats.
Status Lexer::LexNumber() {
  std::string_view s(src_);
  if (s[pos_] == '0' && pos_ + 1 < s.size() &&
      std::string_view("bBoOxX").find(s[pos_ + 1]) != std::string_view::npos) {
    const char kind = static_cast<char>(std::tolower(s[pos_ + 1]));
    const int base = kind == 'b' ? 2 : kind == 'o' ? 8 : 16;
    auto is_digit = [&](char d) {
      const int v = std::isdigit(static_cast<unsigned char>(d))    ? d - '0'
                    : std::isxdigit(static_cast<unsigned char>(d)) ? std::tolower(d) - 'a' + 10
                                                                   : 99;
      return v < base;
    };
    std::string digits;
    size_t q = pos_ + 2;
    while (q < s.size()) {  // (_?digit)+
      const size_t r = s[q] == '_' ? q + 1 : q;
      if (r >= s.size() || !is_digit(s[r])) break;
      digits += s[r];
      q = r + 1;
    }
    if (!digits.empty()) {
      errno = 0;
      const long long v = std::strtoll(digits.c_str(), nullptr, base);
      if (errno == ERANGE) {
        return Fail("integer literal '" + std::string(s.substr(pos_, q - pos_)) + "' is too large");
      }
      Emit(TokenType::kInteger);
      tokens_.back().int_value = v;
      Advance(q);
      return Status::Ok();
    }
  }
  bool is_float = false;
  const std::optional<size_t> end = MatchNumber(is_float);
  if (!end) return Fail("unexpected char '" + std::string(1, s[pos_]) + "'");
  std::string text;
  for (size_t i = pos_; i < *end; ++i) {
    if (s[i] != '_') text += s[i];
  }
  Emit(is_float ? TokenType::kFloat : TokenType::kInteger, text);
  if (is_float) {
    tokens_.back().float_value = std::strtod(text.c_str(), nullptr);
  } else {
    errno = 0;
    tokens_.back().int_value = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) return Fail("integer literal " + text + " is too large");
  }
  Advance(*end);
  return Status::Ok();
}

// Operators, two-character ones first; brackets must balance inside a tag.
Status Lexer::LexOperator() {
  std::string_view s(src_);
  const char c = s[pos_];
  static constexpr std::string_view kTwoChar[] = {"//", "**", "==", "!=", ">=", "<="};
  for (std::string_view op : kTwoChar) {
    if (s.substr(pos_, 2) == op) {
      Emit(TokenType::kOperator, std::string(op));
      Advance(pos_ + 2);
      return Status::Ok();
    }
  }
  if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos) {
    std::string shown(1, c);
    if (static_cast<unsigned char>(c) >= 0x80) {
      size_t q = pos_;
      shown = unicode::Encode(std::u32string(1, unicode::Next(s, q)));
    }
    return Fail("unexpected char '" + shown + "' at " + std::to_string(pos_));
  }
  if (c == '(' || c == '[' || c == '{') {
    brackets_.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
  } else if (c == ')' || c == ']' || c == '}') {
    if (brackets_.empty()) return Fail(std::string("unexpected '") + c + "'");
    if (brackets_.back() != c) {
      return Fail(std::string("unexpected '") + c + "', expected '" + brackets_.back() + "'");
    }
    brackets_.pop_back();
  }
  Emit(TokenType::kOperator, std::string(1, c));
  Advance(pos_ + 1);
  return Status::Ok();
}

Status Lexer::LexString() {
  const char quote = src_[pos_];
  size_t q = pos_ + 1;
  while (q < src_.size() && src_[q] != quote) {
    q += src_[q] == '\\' ? 2 : 1;
  }
  if (q >= src_.size())
    return Fail("unexpected char '" + std::string(1, quote) + "' at " + std::to_string(pos_));
  Result<std::string> value =
      UnescapeStringLiteral(std::string_view(src_).substr(pos_ + 1, q - pos_ - 1));
  if (!value.ok()) return Fail(value.status().message());
  Emit(TokenType::kString, std::move(value).value());
  Advance(q + 1);
  return Status::Ok();
}

}  // namespace

Result<std::vector<Token>> Tokenize(std::string_view source) {
  const size_t bad = unicode::FindInvalidUtf8(source);
  if (bad != std::string_view::npos) {
    return shared::InvalidArgument("template is not valid UTF-8 (byte offset " +
                                   std::to_string(bad) + ")");
  }
  return Lexer(NormalizeNewlines(source)).Run();
}

}  // namespace smallmind::jinja
