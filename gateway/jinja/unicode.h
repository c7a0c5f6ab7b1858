// UTF-8 and code point helpers for the Jinja interpreter: Python's str works on code points, so
// len(), slicing, center(), lower() and repr() here do too. Strings handed in are valid UTF-8 (the
// template and its inputs are checked on entry). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace smallmind::jinja::unicode {

// Returns the byte offset of the first invalid sequence, or npos when `s` is valid UTF-8
// (no overlongs, no surrogates, nothing above U+10FFFF).
size_t FindInvalidUtf8(std::string_view s);

// Decodes the code point starting at byte `i` of valid UTF-8 and advances `i` past it.
char32_t Next(std::string_view s, size_t& i);
void Append(std::string& out, char32_t cp);
std::u32string Decode(std::string_view s);
std::string Encode(std::u32string_view s);
size_t Length(std::string_view s);  // in code points

// Python's str predicates for one code point.
bool IsSpace(char32_t cp);  // str.isspace(), also what Python's re `\s` matches
bool IsPrintable(char32_t cp);
bool IsAlpha(char32_t cp);
bool IsDecimal(char32_t cp);
bool IsDigit(char32_t cp);
bool IsNumeric(char32_t cp);
bool IsLower(char32_t cp);
bool IsUpper(char32_t cp);
bool IsTitle(char32_t cp);  // titlecase letters (Lt) only
bool IsCased(char32_t cp);

// Appends Python's lower()/upper()/title mapping of one code point (some map to several).
void AppendLower(std::string& out, char32_t cp);
void AppendUpper(std::string& out, char32_t cp);
void AppendTitle(std::string& out, char32_t cp);

std::string Lower(std::string_view s);
std::string Upper(std::string_view s);

// Python's str.strip()/lstrip()/rstrip(): with no `chars`, Unicode whitespace; else any code
// point of `chars`.
std::string_view Strip(std::string_view s, const std::string* chars, bool left, bool right);

}  // namespace smallmind::jinja::unicode
