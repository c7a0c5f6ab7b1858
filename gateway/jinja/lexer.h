// Splits a Jinja template into tokens exactly as jinja2 3.1's lexer does under transformers'
// settings (trim_blocks, lstrip_blocks, keep_trailing_newline=False): template data with whitespace
// control already applied, tag delimiters, and the Python-like tokens inside tags. Comments vanish
// and
// {% raw %} bodies arrive as data. Called once per template by the parser; pure, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"

namespace smallmind::jinja {

enum class TokenType : uint8_t {
  kData,
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,
  kString,
  kInteger,
  kFloat,
  kOperator,
  kEof,
};

struct Token {
  TokenType type = TokenType::kEof;
  std::string text;  // data, name, operator symbol, or the unescaped string literal
  int64_t int_value = 0;
  double float_value = 0.0;
  int line = 1;
};

// Fails with "line N: ..." on malformed input (unterminated comment or string, bad escape,
// unbalanced brackets, a character no token starts with).
shared::Result<std::vector<Token>> Tokenize(std::string_view source);

// Python's unicode-escape decoding of a string literal's body ("\n", "\x41", "\u00e9", ...).
shared::Result<std::string> UnescapeStringLiteral(std::string_view body);

}  // namespace smallmind::jinja
