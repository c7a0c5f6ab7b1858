#include "gateway/jinja/unicode.h"

#include <algorithm>

#include "gateway/jinja/unicode_tables.h"

namespace smallmind::jinja::unicode {
namespace {

using unicode_tables::CaseRun;
using unicode_tables::CodepointRange;
using unicode_tables::SpecialCase;

bool InRanges(const CodepointRange* table, size_t n, char32_t cp) {
  const CodepointRange* end = table + n;
  const CodepointRange* it = std::upper_bound(
      table, end, cp, [](char32_t c, const CodepointRange& r) { return c < r.first; });
  return it != table && cp <= (it - 1)->last;
}

// Appends the mapping of `cp` through a run table plus its multi-code-point exceptions.
void AppendMapped(std::string& out, char32_t cp, const CaseRun* runs, size_t n_runs,
                  const SpecialCase* special, size_t n_special) {
  const SpecialCase* s_end = special + n_special;
  const SpecialCase* s = std::lower_bound(
      special, s_end, cp, [](const SpecialCase& sc, char32_t c) { return sc.cp < c; });
  if (s != s_end && s->cp == cp) {
    for (char32_t c : s->out) {
      if (c == 0) break;
      Append(out, c);
    }
    return;
  }
  const CaseRun* r_end = runs + n_runs;
  const CaseRun* it =
      std::upper_bound(runs, r_end, cp, [](char32_t c, const CaseRun& r) { return c < r.first; });
  if (it != runs) {
    const CaseRun& r = *(it - 1);
    if (cp <= r.last && (cp - r.first) % r.stride == 0) {
      Append(out, static_cast<char32_t>(static_cast<int64_t>(cp) + r.delta));
      return;
    }
  }
  Append(out, cp);
}

}  // namespace

size_t FindInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    int len = 0;
    char32_t min = 0;
    char32_t cp = 0;
    if ((b0 & 0xE0) == 0xC0) {
      len = 2, min = 0x80, cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3, min = 0x800, cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4, min = 0x10000, cp = b0 & 0x07;
    } else {
      return i;
    }
    if (i + len > s.size()) return i;
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

char32_t Next(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  int len = 1;
  char32_t cp = b0;
  if (b0 >= 0xF0) {
    len = 4, cp = b0 & 0x07;
  } else if (b0 >= 0xE0) {
    len = 3, cp = b0 & 0x0F;
  } else if (b0 >= 0xC0) {
    len = 2, cp = b0 & 0x1F;
  }
  for (int k = 1; k < len && i + k < s.size(); ++k) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  }
  i += len;
  return cp;
}

void Append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::u32string Decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) out.push_back(Next(s, i));
  return out;
}

std::string Encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t cp : s) Append(out, cp);
  return out;
}

size_t Length(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool IsSpace(char32_t cp) {
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool IsPrintable(char32_t cp) {
  using namespace unicode_tables;
  return !InRanges(kNonPrintable, kNonPrintableSize, cp);
}
bool IsAlpha(char32_t cp) {
  using namespace unicode_tables;
  return InRanges(kAlpha, kAlphaSize, cp);
}
bool IsDecimal(char32_t cp) {
  using namespace unicode_tables;
  return InRanges(kDecimal, kDecimalSize, cp);
}
bool IsDigit(char32_t cp) {
  using namespace unicode_tables;
  return InRanges(kDigit, kDigitSize, cp);
}
bool IsNumeric(char32_t cp) {
  using namespace unicode_tables;
  return InRanges(kNumeric, kNumericSize, cp);
}
bool IsLower(char32_t cp) {
  using namespace unicode_tables;
  return InRanges(kLowercase, kLowercaseSize, cp);
}
bool IsUpper(char32_t cp) {
  using namespace unicode_tables;
  return InRanges(kUppercase, kUppercaseSize, cp);
}
bool IsTitle(char32_t cp) {
  using namespace unicode_tables;
  return InRanges(kTitlecase, kTitlecaseSize, cp);
}
bool IsCased(char32_t cp) { return IsLower(cp) || IsUpper(cp) || IsTitle(cp); }

void AppendLower(std::string& out, char32_t cp) {
  using namespace unicode_tables;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
    return;
  }
  AppendMapped(out, cp, kToLowerRuns, kToLowerRunsSize, kToLowerSpecial, kToLowerSpecialSize);
}

void AppendUpper(std::string& out, char32_t cp) {
  using namespace unicode_tables;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp >= 'a' && cp <= 'z' ? cp - 32 : cp));
    return;
  }
  AppendMapped(out, cp, kToUpperRuns, kToUpperRunsSize, kToUpperSpecial, kToUpperSpecialSize);
}

void AppendTitle(std::string& out, char32_t cp) {
  using namespace unicode_tables;
  if (cp < 0x80) {
    AppendUpper(out, cp);
    return;
  }
  AppendMapped(out, cp, kToTitleRuns, kToTitleRunsSize, kToTitleSpecial, kToTitleSpecialSize);
}

std::string Lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) AppendLower(out, Next(s, i));
  return out;
}

std::string Upper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) AppendUpper(out, Next(s, i));
  return out;
}

std::string_view Strip(std::string_view s, const std::string* chars, bool left, bool right) {
  std::u32string set;
  if (chars != nullptr) set = Decode(*chars);
  auto strip_it = [&](char32_t cp) {
    return chars == nullptr ? IsSpace(cp) : set.find(cp) != std::u32string::npos;
  };
  size_t begin = 0;
  size_t end = s.size();
  if (left) {
    while (begin < end) {
      size_t next = begin;
      if (!strip_it(Next(s, next))) break;
      begin = next;
    }
  }
  if (right) {
    while (end > begin) {
      size_t start = end - 1;
      while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
      size_t probe = start;
      if (!strip_it(Next(s, probe))) break;
      end = start;
    }
  }
  return s.substr(begin, end - begin);
}

}  // namespace smallmind::jinja::unicode
