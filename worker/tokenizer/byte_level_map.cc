#include "worker/tokenizer/byte_level_map.h"

#include "shared/check.h"

namespace smallmind::worker {

namespace {

bool StandsForItself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

}  // namespace

ByteLevelMap::ByteLevelMap() {
  cp_to_byte_.fill(-1);
  char32_t next = 0x100;
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = StandsForItself(b) ? static_cast<char32_t>(b) : next++;
    byte_to_cp_[b] = cp;
    SM_CHECK(cp < cp_to_byte_.size()) << "byte " << b << " maps past the table";
    cp_to_byte_[cp] = static_cast<int16_t>(b);
    std::string s;
    AppendUtf8(cp, &s);
    utf8_[b] = {s[0], s.size() > 1 ? s[1] : '\0'};
  }
  SM_CHECK(next == 0x100 + 68) << "GPT-2's alphabet remaps 68 bytes";
}

void ByteLevelMap::AppendEncoded(std::string_view bytes, std::string* out) const {
  for (char c : bytes) {
    const std::array<char, 2>& u = utf8_[static_cast<uint8_t>(c)];
    out->push_back(u[0]);
    if (u[1] != '\0') out->push_back(u[1]);
  }
}

void ByteLevelMap::AppendDecoded(std::string_view text, std::string* out) const {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const int32_t cp = NextCodePoint(text, &pos);
    const int b = cp < 0 ? -1 : Byte(static_cast<char32_t>(cp));
    if (b >= 0) {
      out->push_back(static_cast<char>(b));
    } else {
      out->append(text.substr(start, pos - start));
    }
  }
}

int32_t NextCodePoint(std::string_view text, size_t* pos) {
  const auto at = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = at(*pos);
  int len = 0;
  int32_t cp = 0;
  if (lead < 0x80) {
    ++*pos;
    return lead;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
    cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    cp = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    cp = lead & 0x07;
  } else {
    ++*pos;
    return -1;
  }
  if (*pos + len > text.size()) {
    ++*pos;
    return -1;
  }
  for (int k = 1; k < len; ++k) {
    const uint8_t c = at(*pos + k);
    if ((c & 0xC0) != 0x80) {
      ++*pos;
      return -1;
    }
    cp = (cp << 6) | (c & 0x3F);
  }
  const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
  if (overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
    ++*pos;
    return -1;
  }
  *pos += len;
  return cp;
}

void AppendUtf8(char32_t cp, std::string* out) {
  SM_DCHECK(cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF))
      << "not a scalar value: " << static_cast<uint32_t>(cp);
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace smallmind::worker
