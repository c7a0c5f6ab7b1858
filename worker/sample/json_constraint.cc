#include "worker/sample/json_constraint.h"

#include <limits>

namespace smallmind::worker {
namespace {

bool IsWhitespace(unsigned char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

int HexValue(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool JsonPrefix::Feed(std::string_view bytes) {
  for (char c : bytes) {
    if (!Feed(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool JsonPrefix::Feed(unsigned char c) {
  switch (mode_) {
    case Mode::kString: return String(c);
    case Mode::kEscape:
      if (c == 'u') {
        mode_ = Mode::kHex;
        hex_left_ = 4;
        hex_ = 0;
        return true;
      }
      if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' && c != 'n' && c != 'r' &&
          c != 't') {
        return false;
      }
      mode_ = Mode::kString;
      return true;
    case Mode::kHex: return Hex(c);
    case Mode::kLowBackslash:
      if (c != '\\') return false;
      mode_ = Mode::kLowU;
      return true;
    case Mode::kLowU:
      if (c != 'u') return false;
      mode_ = Mode::kHex;
      hex_left_ = 4;
      hex_ = 0;
      low_ = true;
      return true;
    case Mode::kLiteral:
      if (c != static_cast<unsigned char>(*literal_)) return false;
      return *++literal_ != '\0' || EndValue();
    case Mode::kNumMinus:
    case Mode::kNumZero:
    case Mode::kNumInt:
    case Mode::kNumDot:
    case Mode::kNumFrac:
    case Mode::kNumE:
    case Mode::kNumESign:
    case Mode::kNumExp: return Number(c);
    default: return Structural(c);
  }
}

// Between tokens: whitespace, punctuation, the start of a value.
bool JsonPrefix::Structural(unsigned char c) {
  if (IsWhitespace(c)) {
    if (c == '\r') return false;  // line breaks are '\n' alone
    if (c == '\n' && newline_) return false;
    newline_ = newline_ || c == '\n';
    // Before the object, one byte: a space a tokenizer glues to '{' ("▁{"), not a preamble.
    return ++whitespace_ <= (mode_ == Mode::kStart ? 1 : kMaxWhitespace);
  }
  whitespace_ = 0;
  newline_ = false;
  switch (mode_) {
    case Mode::kStart: return c == '{' && Open(true);
    case Mode::kObjectFirst:
      if (c == '}') return Close();
      [[fallthrough]];
    case Mode::kKey:
      if (c != '"') return false;
      mode_ = Mode::kString;
      key_ = true;
      return true;
    case Mode::kColon:
      if (c != ':') return false;
      mode_ = Mode::kValue;
      return true;
    case Mode::kArrayFirst:
      if (c == ']') return Close();
      [[fallthrough]];
    case Mode::kValue: return StartValue(c);
    case Mode::kAfterValue:
      if (c == ',') {
        mode_ = TopIsObject() ? Mode::kKey : Mode::kValue;
        return true;
      }
      if (c == '}' || c == ']') return TopIsObject() == (c == '}') && Close();
      return false;
    default: return false;  // kDone: only whitespace
  }
}

bool JsonPrefix::StartValue(unsigned char c) {
  switch (c) {
    case '{': return Open(true);
    case '[': return Open(false);
    case '"':
      mode_ = Mode::kString;
      key_ = false;
      return true;
    case 't': literal_ = "rue"; break;
    case 'f': literal_ = "alse"; break;
    case 'n': literal_ = "ull"; break;
    default:
      if (c != '-' && !IsDigit(c)) return false;
      mode_ = c == '-' ? Mode::kNumMinus : c == '0' ? Mode::kNumZero : Mode::kNumInt;
      number_bytes_ = 1;
      return true;
  }
  mode_ = Mode::kLiteral;
  return true;
}

bool JsonPrefix::String(unsigned char c) {
  if (utf8_left_ > 0) {  // a continuation byte, in the range RFC 3629's table allows here
    if (c < utf8_lo_ || c > utf8_hi_) return false;
    utf8_lo_ = 0x80;
    utf8_hi_ = 0xbf;
    --utf8_left_;
    return true;
  }
  if (c == '"') {
    if (!key_) return EndValue();
    key_ = false;
    mode_ = Mode::kColon;
    return true;
  }
  if (c == '\\') {
    mode_ = Mode::kEscape;
    return true;
  }
  if (c < 0x20) return false;  // control characters must be escaped
  if (c < 0x80) return true;
  // A lead byte: how many continuation bytes follow, and the range of the first (no overlongs,
  // no surrogates, nothing past U+10FFFF).
  if (c >= 0xc2 && c <= 0xdf) {
    utf8_left_ = 1;
  } else if (c >= 0xe0 && c <= 0xef) {
    utf8_left_ = 2;
    if (c == 0xe0) utf8_lo_ = 0xa0;
    if (c == 0xed) utf8_hi_ = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    utf8_left_ = 3;
    if (c == 0xf0) utf8_lo_ = 0x90;
    if (c == 0xf4) utf8_hi_ = 0x8f;
  } else {
    return false;
  }
  return true;
}

// A digit of \uXXXX. A prefix is taken only when some completion is a valid escape: a low half
// must be DC00-DFFF, and a lone low half (DC.. without a high one before it) never is.
bool JsonPrefix::Hex(unsigned char c) {
  const int v = HexValue(c);
  if (v < 0) return false;
  hex_ = static_cast<uint16_t>(hex_ * 16 + v);
  --hex_left_;
  if (hex_left_ == 3 && low_ && hex_ != 0xd) return false;
  if (hex_left_ == 2) {
    const bool low_half = hex_ >= 0xdc && hex_ <= 0xdf;
    if (low_half != low_) return false;
  }
  if (hex_left_ > 0) return true;
  if (!low_ && hex_ >= 0xd800 && hex_ <= 0xdbff) {
    mode_ = Mode::kLowBackslash;  // a high half: its low half must follow
    return true;
  }
  low_ = false;
  mode_ = Mode::kString;
  return true;
}

bool JsonPrefix::Number(unsigned char c) {
  // Room for the digit a '.', an 'e' or a sign must be followed by.
  const bool room = number_bytes_ < kMaxNumberBytes;
  const bool room_for_two = number_bytes_ + 1 < kMaxNumberBytes;
  Mode next = mode_;
  switch (mode_) {
    case Mode::kNumMinus:
      if (!IsDigit(c)) return false;
      next = c == '0' ? Mode::kNumZero : Mode::kNumInt;
      break;
    case Mode::kNumDot:
    case Mode::kNumESign:
      if (!IsDigit(c)) return false;
      next = mode_ == Mode::kNumDot ? Mode::kNumFrac : Mode::kNumExp;
      if (next == Mode::kNumExp) exponent_digits_ = 1;
      break;
    case Mode::kNumE:
      if (c == '+' || c == '-') {
        if (!room_for_two) return false;
        next = Mode::kNumESign;
      } else if (IsDigit(c)) {
        next = Mode::kNumExp;
        exponent_digits_ = 1;
      } else {
        return false;
      }
      break;
    default:  // kNumZero, kNumInt, kNumFrac, kNumExp: the number may end here
      if (IsDigit(c) && mode_ != Mode::kNumZero) {
        if (!room) return false;
        if (mode_ == Mode::kNumExp && exponent_digits_++ == kMaxExponentDigits) return false;
      } else if (c == '.' && (mode_ == Mode::kNumZero || mode_ == Mode::kNumInt)) {
        if (!room_for_two) return false;
        next = Mode::kNumDot;
      } else if ((c == 'e' || c == 'E') && mode_ != Mode::kNumExp) {
        if (!room_for_two) return false;
        next = Mode::kNumE;
      } else {
        EndValue();  // the number ends; `c` is what follows it
        return Structural(c);
      }
  }
  mode_ = next;
  ++number_bytes_;
  return true;
}

bool JsonPrefix::Open(bool object) {
  if (depth_ == kMaxDepth) return false;
  const uint64_t bit = uint64_t{1} << depth_;
  stack_ = object ? stack_ | bit : stack_ & ~bit;
  ++depth_;
  mode_ = object ? Mode::kObjectFirst : Mode::kArrayFirst;
  return true;
}

bool JsonPrefix::Close() {
  --depth_;
  return EndValue();
}

bool JsonPrefix::EndValue() {
  mode_ = depth_ == 0 ? Mode::kDone : Mode::kAfterValue;
  return true;
}

int MaskJsonLogits(const JsonPrefix& state, const TokenBytes& vocab, std::span<float> logits) {
  // Most tokens are refused by their first byte: try each byte value once.
  bool first_ok[256];
  for (int c = 0; c < 256; c++) {
    JsonPrefix s = state;
    first_ok[c] = s.Feed(static_cast<unsigned char>(c));
  }
  const int n = static_cast<int>(logits.size());
  const int known = std::min(n, vocab.vocab_size());
  // Inside a string most tokens are plain text, taken without being read: on a 32k vocabulary
  // that is most of the constraint's cost.
  const bool in_string = state.between_string_chars();
  int left = 0;
  for (int id = 0; id < known; id++) {
    if (in_string && vocab.Plain(id)) {
      ++left;
      continue;
    }
    const std::string_view bytes = vocab.Of(id);
    bool ok = !bytes.empty() && first_ok[static_cast<unsigned char>(bytes[0])];
    if (ok && bytes.size() > 1) {
      JsonPrefix s = state;
      ok = s.Feed(bytes);
    }
    if (ok) {
      ++left;
    } else {
      logits[id] = -std::numeric_limits<float>::infinity();
    }
  }
  for (int id = known; id < n; id++) logits[id] = -std::numeric_limits<float>::infinity();
  return left;
}

}  // namespace smallmind::worker
