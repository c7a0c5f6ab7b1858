// Python's unicode-escape decoding of template string literals (declared in lexer.h).
#include "gateway/jinja/lexer.h"

#include <cctype>
#include <cstdio>

#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {
namespace {

bool HexValue(std::string_view s, size_t pos, size_t n, char32_t& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
    out = out * 16 + static_cast<char32_t>(std::isdigit(static_cast<unsigned char>(s[i]))
                                               ? s[i] - '0'
                                               : std::tolower(s[i]) - 'a' + 10);
  }
  return true;
}

// UnescapeStringLiteral's \xXX, \uXXXX and \UXXXXXXXX (`e` is the letter; `i` indexes the
// first hex digit and moves past the last).
shared::Status AppendHexEscape(std::string_view body, char e, size_t& i, std::string& out) {
  const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
  char32_t cp = 0;
  if (!HexValue(body, i, n, cp)) {
    return shared::InvalidArgument(std::string("truncated \\") + e + "XX escape");
  }
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return shared::InvalidArgument("illegal Unicode character in string literal");
  }
  unicode::Append(out, cp);
  i += n;
  return shared::Status::Ok();
}

// UnescapeStringLiteral's other escapes: octal, a backslash before a non-ASCII character, and an
// unknown escape kept as written (`i` indexes the byte after `e`).
void AppendOtherEscape(std::string_view body, char e, size_t& i, std::string& out) {
  if (e >= '0' && e <= '7') {
    char32_t cp = static_cast<char32_t>(e - '0');
    for (int k = 0; k < 2 && i < body.size() && body[i] >= '0' && body[i] <= '7'; ++k) {
      cp = cp * 8 + static_cast<char32_t>(body[i++] - '0');
    }
    unicode::Append(out, cp);
  } else if (static_cast<unsigned char>(e) >= 0x80) {
    // Python escapes the non-ASCII character first, so the backslash stays and the
    // character comes out as its \x/\u/\U escape text.
    size_t start = i - 1;
    const char32_t cp = unicode::Next(body, start);
    i = start;
    char buf[16];
    if (cp <= 0xFF) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned>(cp));
    } else if (cp <= 0xFFFF) {
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
    } else {
      std::snprintf(buf, sizeof(buf), "\\U%08x", static_cast<unsigned>(cp));
    }
    out += buf;
  } else {
    out += '\\';
    out += e;
  }
}

}  // namespace

shared::Result<std::string> UnescapeStringLiteral(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size();) {
    if (body[i] != '\\' || i + 1 >= body.size()) {
      out += body[i++];
      continue;
    }
    const char e = body[i + 1];
    i += 2;
    switch (e) {
      case '\n': break;  // line continuation
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x':
      case 'u':
      case 'U': SM_RETURN_IF_ERROR(AppendHexEscape(body, e, i, out)); break;
      case 'N': return shared::InvalidArgument("\\N{...} escapes are not supported");
      default: AppendOtherEscape(body, e, i, out);
    }
  }
  return out;
}

}  // namespace smallmind::jinja
