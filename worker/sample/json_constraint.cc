#include "worker/sample/json_constraint.h"

#include <algorithm>
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
    case Mode::kKeyMatch: return KeyMatch(c);
    case Mode::kEnum: return Enum(c);
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
  if (IsWhitespace(c)) return Blank(c);
  whitespace_ = 0;
  newline_ = false;
  switch (mode_) {
    case Mode::kStart: return c == '{' && Open(schema_->root());
    case Mode::kObjectFirst:
      if (c == '}') return CanClose() && Close();
      [[fallthrough]];
    case Mode::kKey: return c == '"' && BeginKey();
    case Mode::kColon:
      if (c != ':') return false;
      mode_ = Mode::kValue;
      return true;
    case Mode::kArrayFirst:
      if (c == ']') return CanClose() && Close();
      return CanContinue() && StartValue(c, NextItem());
    case Mode::kValue: return StartValue(c, TopIsObject() ? value_node_ : NextItem());
    case Mode::kAfterValue:
      if (c == ',') {
        if (!CanContinue()) return false;
        mode_ = TopIsObject() ? Mode::kKey : Mode::kValue;
        return true;
      }
      if (c == '}' || c == ']') return TopIsObject() == (c == '}') && CanClose() && Close();
      return false;
    default: return false;  // kDone: only whitespace
  }
}

bool JsonPrefix::Blank(unsigned char c) {
  if (c == '\r') return false;
  if (c == '\n') {
    // A run starts with its line break; none between a key and its value.
    const bool breaks = mode_ != Mode::kColon && !(mode_ == Mode::kValue && TopIsObject());
    if (whitespace_ > 0 || !breaks) return false;
    newline_ = true;
    whitespace_ = 1;
    return true;
  }
  if (!newline_) return whitespace_++ == 0;  // one blank between tokens
  const int indent = whitespace_ - 1;        // the bytes after the line break
  if (indent >= std::min(kMaxIndent, kIndentPerLevel * depth_)) return false;
  ++whitespace_;
  return true;
}

bool JsonPrefix::CanClose() const {
  const shared::JsonSchema::Node& n = TopNode();
  if (n.kind == Kind::kArray) return Top().count >= n.min_items;
  // An object: no required property left (the next one's next required is past the end).
  const int next = Top().count;
  return next >= n.count || schema_->property(n.first + next).next_required >= n.count;
}

int32_t JsonPrefix::NextItem() const {
  const shared::JsonSchema::Node& n = TopNode();
  const int i = Top().count;
  return i < n.count ? schema_->prefix_item(n.first + i) : n.items;
}

bool JsonPrefix::CanContinue() const {
  const shared::JsonSchema::Node& n = TopNode();
  if (n.kind == Kind::kArray) return Top().count < n.max_items;
  return n.count > 0 ? Top().count < n.count : n.extra >= 0;
}

// The value `node` describes, starting with `c`.
bool JsonPrefix::StartValue(unsigned char c, int32_t node) {
  while (schema_->node(node).kind == Kind::kAnyOf) {
    node = schema_->Dispatch(node, c);
    if (node < 0) return false;
  }
  const shared::JsonSchema::Node& n = schema_->node(node);
  const Kind kind = n.kind;
  if (kind == Kind::kLiterals) {
    mode_ = Mode::kEnum;
    lit_lo_ = n.first;
    lit_hi_ = n.first + n.count;
    lit_off_ = 0;
    return Enum(c);
  }
  switch (c) {
    case '{':
      if (kind == Kind::kAny) return Open(shared::JsonSchema::kAnyObject);
      return kind == Kind::kObject && Open(node);
    case '[':
      if (kind == Kind::kAny) return Open(shared::JsonSchema::kAnyArray);
      return kind == Kind::kArray && Open(node);
    case '"':
      if (kind != Kind::kAny && kind != Kind::kString) return false;
      mode_ = Mode::kString;
      key_ = false;
      str_chars_ = 0;
      str_min_ = kind == Kind::kString ? static_cast<uint16_t>(n.min_length) : 0;
      str_max_ = kind == Kind::kString && n.max_length < kUnbounded
                     ? static_cast<uint16_t>(n.max_length)
                     : kUnbounded;
      return true;
    case 't':
    case 'f':
      if (kind != Kind::kAny && kind != Kind::kBoolean) return false;
      literal_ = c == 't' ? "rue" : "alse";
      break;
    case 'n':
      if (kind != Kind::kAny && kind != Kind::kNull) return false;
      literal_ = "ull";
      break;
    default:
      if (c != '-' && !IsDigit(c)) return false;
      if (kind != Kind::kAny && kind != Kind::kNumber && kind != Kind::kInteger) return false;
      return StartNumber(c, n);
  }
  mode_ = Mode::kLiteral;
  return true;
}

// The number `n` (of kind any, number or integer) describes, starting with `c`.
bool JsonPrefix::StartNumber(unsigned char c, const shared::JsonSchema::Node& n) {
  mode_ = c == '-' ? Mode::kNumMinus : c == '0' ? Mode::kNumZero : Mode::kNumInt;
  number_bytes_ = 1;
  integer_ = n.kind == Kind::kInteger;
  range_ = n.kind == Kind::kNumber && n.bounded ? &n.range : nullptr;
  number_limit_ = static_cast<uint8_t>(integer_ ? kMaxIntegerDigits + (c == '-' ? 1 : 0)
                                       : range_ ? kMaxBoundedNumberBytes
                                                : kMaxNumberBytes);
  if (!DigitsTracked()) return true;
  int_lo_ = n.min_int;
  int_hi_ = n.max_int;
  digits_ = shared::NumberDigits{};
  digits_.negative = c == '-';
  if (c != '-') digits_.Append(c - '0');
  return Reachable();
}

// The '"' of a key in the top object: a free key (any string) or one of the properties the schema
// lets come next, in its order: the next one and, while they are optional, the ones after it.
bool JsonPrefix::BeginKey() {
  const shared::JsonSchema::Node& n = TopNode();
  if (n.count == 0) {
    if (n.extra < 0) return false;
    mode_ = Mode::kString;
    key_ = true;
    str_chars_ = 0;
    str_min_ = 0;
    str_max_ = kUnbounded;
    return true;
  }
  const int next = Top().count;
  if (next >= n.count) return false;
  const int last = std::min<int>(schema_->property(n.first + next).next_required, n.count - 1);
  key_mask_ = 0;
  for (int i = next; i <= last; i++) key_mask_ |= uint64_t{1} << i;
  key_off_ = 0;
  mode_ = Mode::kKeyMatch;
  return true;
}

// A byte of a listed key. No key's text (its escaped name and '"') begins another's, so the key
// whose last byte this is is the only one left.
bool JsonPrefix::KeyMatch(unsigned char c) {
  const shared::JsonSchema::Node& n = TopNode();
  uint64_t keep = 0;
  int done = -1;
  for (uint64_t m = key_mask_; m != 0; m &= m - 1) {
    const int i = __builtin_ctzll(m);
    const std::string& key = schema_->property(n.first + i).key;
    if (key_off_ < key.size() && static_cast<unsigned char>(key[key_off_]) == c) {
      keep |= uint64_t{1} << i;
      if (key_off_ + 1u == key.size()) done = i;
    }
  }
  if (keep == 0) return false;
  key_mask_ = keep;
  ++key_off_;
  if (done >= 0) {
    frames_[depth_ - 1].count = static_cast<uint16_t>(done + 1);
    value_node_ = schema_->property(n.first + done).node;
    mode_ = Mode::kColon;
  }
  return true;
}

// A byte of an enum/const value. The literals are sorted, so those that begin with the bytes so
// far are a run, and within it those that go on with `c` are one too; a literal that is whole
// ends the value when `c` goes on none (`c` is then what follows the value).
bool JsonPrefix::Enum(unsigned char c) {
  int32_t lo = -1, hi = -1;
  for (int32_t i = lit_lo_; i < lit_hi_; i++) {
    const std::string& lit = schema_->literal(i);
    if (lit.size() > lit_off_ && static_cast<unsigned char>(lit[lit_off_]) == c) {
      if (lo < 0) lo = i;
      hi = i + 1;
    } else if (lo >= 0) {
      break;
    }
  }
  if (lo >= 0) {
    lit_lo_ = lo;
    lit_hi_ = hi;
    ++lit_off_;
    // The one literal left is whole: nothing can follow inside it.
    if (hi - lo == 1 && schema_->literal(lo).size() == lit_off_) return EndValue();
    return true;
  }
  if (lit_off_ > 0 && schema_->literal(lit_lo_).size() == lit_off_) {
    EndValue();
    return Structural(c);
  }
  return false;
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
    if (!key_) return str_chars_ >= str_min_ && EndValue();
    key_ = false;
    value_node_ = TopNode().extra;  // a free key's value
    mode_ = Mode::kColon;
    return true;
  }
  if (c < 0x20) return false;  // control characters must be escaped
  // A character begins (an escape is the one it stands for; a surrogate pair's low half is read
  // in its own modes): it must fit the string's maxLength.
  if (c < 0x80 || (c >= 0xc2 && c <= 0xf4)) {
    if (str_max_ != kUnbounded && str_chars_ >= str_max_) return false;
    if (str_chars_ < kUnbounded) ++str_chars_;
  }
  if (c == '\\') {
    mode_ = Mode::kEscape;
    return true;
  }
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
  // Room for the digit a sign must be followed by.
  const bool room_for_two = number_bytes_ + 1 < number_limit_;
  Mode next = mode_;
  switch (mode_) {
    case Mode::kNumMinus:
    case Mode::kNumDot:
      if (!IsDigit(c)) return false;
      next = mode_ == Mode::kNumDot ? Mode::kNumFrac : c == '0' ? Mode::kNumZero : Mode::kNumInt;
      if (DigitsTracked()) {
        digits_.Append(c - '0');
        if (!Reachable()) return false;
      }
      break;
    case Mode::kNumESign:
      if (!IsDigit(c)) return false;
      next = Mode::kNumExp;
      exponent_digits_ = 1;
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
      return NumberAfterDigit(c);
  }
  mode_ = next;
  ++number_bytes_;
  return true;
}

bool JsonPrefix::NumberAfterDigit(unsigned char c) {
  // Room for a digit, and for the digit a '.' or an 'e' must be followed by.
  const bool room = number_bytes_ < number_limit_;
  const bool room_for_two = number_bytes_ + 1 < number_limit_;
  Mode next = mode_;
  if (IsDigit(c) && mode_ != Mode::kNumZero) {
    if (!room) return false;
    if (mode_ == Mode::kNumExp && exponent_digits_++ == kMaxExponentDigits) return false;
    if (DigitsTracked()) {
      if (range_ != nullptr && digits_.digits() == shared::NumberRange::kMaxDigits) return false;
      digits_.Append(c - '0');
      if (!Reachable()) return false;
    }
  } else if (c == '.' && (mode_ == Mode::kNumZero || mode_ == Mode::kNumInt) && !integer_) {
    if (!room_for_two) return false;
    next = Mode::kNumDot;
    if (range_ != nullptr) {
      digits_.dot = true;
      if (!Reachable()) return false;
    }
  } else if ((c == 'e' || c == 'E') && mode_ != Mode::kNumExp && !DigitsTracked()) {
    if (!room_for_two) return false;
    next = Mode::kNumE;
  } else {
    if (DigitsTracked() && !InRange()) return false;
    EndValue();  // the number ends; `c` is what follows it
    return Structural(c);
  }
  mode_ = next;
  ++number_bytes_;
  return true;
}

bool JsonPrefix::Reachable() const {
  return integer_ ? IntegerReachable() : shared::CanReach(*range_, digits_);
}

bool JsonPrefix::InRange() const {
  return integer_ ? IntegerInRange() : shared::InRange(*range_, digits_);
}

// Some integer that begins with the digits read so far (with at most kMaxIntegerDigits digits,
// none after a leading 0) is within [int_lo_, int_hi_].
bool JsonPrefix::IntegerReachable() const {
  // "-": only when a negative integer is in range ("-0" is 0, but a '-' where no negative is
  // allowed reads as a mistake, and a small model drawn toward it would write one).
  if (digits_.int_digits == 0) return int_lo_ < 0;
  __int128 power = 1;  // 10^m for m more digits
  for (int m = 0; digits_.int_digits + m <= kMaxIntegerDigits; ++m, power *= 10) {
    if (digits_.int_value == 0 && m > 0) break;  // "0" and "-0" take no more digits
    const __int128 low = static_cast<__int128>(digits_.int_value) * power;
    const __int128 high = low + power - 1;
    const __int128 lo = digits_.negative ? -high : low;
    const __int128 hi = digits_.negative ? -low : high;
    if (lo <= int_hi_ && hi >= int_lo_) return true;
  }
  return false;
}

bool JsonPrefix::IntegerInRange() const {
  const int64_t v = digits_.negative ? -static_cast<int64_t>(digits_.int_value)
                                     : static_cast<int64_t>(digits_.int_value);
  return int_lo_ <= v && v <= int_hi_;
}

bool JsonPrefix::Open(int32_t node) {
  if (depth_ == kMaxDepth) return false;
  frames_[depth_++] = {static_cast<int16_t>(node), 0};
  mode_ = schema_->node(node).kind == Kind::kObject ? Mode::kObjectFirst : Mode::kArrayFirst;
  return true;
}

bool JsonPrefix::Close() {
  --depth_;
  return EndValue();
}

// A value ends: an item more in an array (a property's index was counted at its key).
bool JsonPrefix::EndValue() {
  if (depth_ == 0) {
    mode_ = Mode::kDone;
    return true;
  }
  Frame& top = frames_[depth_ - 1];
  // A union's discriminator value (the one value it holds) picks the object that goes on, after
  // the discriminator (its first property).
  if (TopNode().variants >= 0) top.node = static_cast<int16_t>(schema_->Variant(top.node, lit_lo_));
  if (TopNode().kind == Kind::kArray && top.count < UINT16_MAX) ++top.count;
  mode_ = Mode::kAfterValue;
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
