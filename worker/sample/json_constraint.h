// The JSON output constraints (GenerateRequest.response_format JSON_OBJECT and JSON_SCHEMA):
// JsonPrefix says whether the bytes generated so far begin a JSON text (RFC 8259) whose top level
// is an object that a compiled schema (shared/json_schema.h) allows, and MaskJsonLogits removes,
// before a request's draw, every token that would make them stop doing so. Every prefix JsonPrefix
// accepts can still be completed, so a vocabulary with a token for every byte never runs out of
// tokens. One JsonPrefix per request, used by one thread at a time; the functions are pure.
//
// Under a schema the object's properties come in the schema's order (required ones always, an
// optional one may be left out), keys and enum/const values exactly as the schema writes them
// (compact JSON), and nothing the schema does not list; whitespace, strings and numbers as below.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "shared/json_number_range.h"
#include "shared/json_schema.h"
#include "worker/tokenizer/token_bytes.h"

namespace smallmind::worker {

class JsonPrefix {
 public:
  static constexpr int kMaxDepth = shared::JsonSchema::kMaxDepth;  // objects and arrays open
  // Any JSON object (JSON_OBJECT).
  JsonPrefix() : JsonPrefix(shared::JsonSchema::AnyObject().get()) {}
  // An object `schema` allows; the schema must outlive this (and its copies).
  explicit JsonPrefix(const shared::JsonSchema* schema) : schema_(schema) {}

  // Whitespace outside strings, as compact, spaced and pretty-printed JSON have it and no more
  // (a model repeating blanks, as small ones do under a constraint, gets a value instead): one
  // ' ' or '\t' between tokens, or a line break ('\n'; '\r' is refused) where printers break
  // lines (after '{', '[' and ',', before '}' and ']', before and after the object) followed by
  // an indentation of at most kIndentPerLevel bytes per open object or array and at most
  // kMaxIndent in all.
  static constexpr int kIndentPerLevel = 4;
  static constexpr int kMaxIndent = 24;
  // Bytes of one number (a double needs at most 24): a model repeating digits gets a delimiter.
  static constexpr int kMaxNumberBytes = 32;
  // Exponent digits: with the byte bound, every number is within a double's range (|x| < 1e131),
  // so no parser refuses it as too large.
  static constexpr int kMaxExponentDigits = 2;
  // Digits of a schema's "integer": every one fits a signed 64-bit integer (|x| < 10^18), the
  // widest integer most parsers read exactly.
  static constexpr int kMaxIntegerDigits = 18;
  static_assert(shared::JsonSchema::kMaxInteger == 999'999'999'999'999'999);
  // A bounded number's bytes: '-', 15 digits and the '.' (shared/json_number_range.h).
  static constexpr int kMaxBoundedNumberBytes = shared::NumberRange::kMaxDigits + 2;

  // Takes the next byte: false when no JSON object begins with the bytes so far followed by `c`
  // (the state is then unspecified; try bytes on a copy). Strings must be well-formed UTF-8 and
  // their \u escapes pair surrogates; after the top-level object only whitespace is taken.
  bool Feed(unsigned char c);
  // Every byte of `bytes` in order; false at the first one refused.
  bool Feed(std::string_view bytes);

  // The top-level object is closed: the text is one complete JSON object.
  bool complete() const { return mode_ == Mode::kDone; }
  // Inside a string between code points: printable ASCII other than '"' and '\\' is taken and
  // leaves the state as it is.
  bool between_string_chars() const {
    return mode_ == Mode::kString && utf8_left_ == 0 && str_max_ == kUnbounded;
  }

 private:
  enum class Mode : uint8_t {
    kStart,         // before the top-level object: whitespace or '{'
    kValue,         // a value: after ':' or after ',' in an array
    kArrayFirst,    // after '[': a value or ']'
    kObjectFirst,   // after '{': a key or '}'
    kKey,           // after ',' in an object: a key
    kColon,         // after a key
    kAfterValue,    // after a value inside a container: ',' or the container's close
    kString,        // inside a string (a free key when key_)
    kKeyMatch,      // inside a listed key: key_mask_ the properties its bytes so far begin
    kEnum,          // inside an enum/const value: literals [lit_lo_, lit_hi_) begin so
    kEscape,        // after '\' in a string
    kHex,           // in \uXXXX: hex_left_ digits to go
    kLowBackslash,  // after a high-surrogate escape: the '\' of its low half
    kLowU,          // ... and its 'u'
    kNumMinus,      // after '-': a digit
    kNumZero,       // a leading 0: '.', an exponent or the end
    kNumInt,        // integer digits
    kNumDot,        // after '.': a digit
    kNumFrac,       // fraction digits
    kNumE,          // after 'e': a sign or a digit
    kNumESign,      // after the exponent's sign: a digit
    kNumExp,        // exponent digits
    kLiteral,       // in true, false or null: literal_ is the rest
    kDone,          // the top-level object is closed: whitespace only
  };

  struct Frame {
    int16_t node;    // the schema node of the open object or array
    uint16_t count;  // array: items so far (saturating); object: the next property's index
  };
  using Kind = shared::JsonSchema::Kind;

  bool Structural(unsigned char c);
  bool StartValue(unsigned char c, int32_t node);
  bool StartNumber(unsigned char c, const shared::JsonSchema::Node& n);  // c: '-' or a digit
  bool BeginKey();
  bool KeyMatch(unsigned char c);
  bool Enum(unsigned char c);
  bool String(unsigned char c);
  bool Hex(unsigned char c);
  bool Number(unsigned char c);
  bool NumberAfterDigit(unsigned char c);  // Number in a mode where the number may end
  bool IntegerReachable() const;           // the integer being read can still end within its bounds
  bool IntegerInRange() const;             // ... and may end here
  bool Reachable() const;                  // the integer or bounded number can still end in range
  bool InRange() const;                    // ... and may end here
  bool DigitsTracked() const { return integer_ || range_ != nullptr; }
  bool Open(int32_t node);
  bool Close();
  bool EndValue();
  const Frame& Top() const { return frames_[depth_ - 1]; }
  const shared::JsonSchema::Node& TopNode() const { return schema_->node(Top().node); }
  bool TopIsObject() const { return TopNode().kind == Kind::kObject; }
  bool CanClose() const;        // the open container may end here
  bool CanContinue() const;     // ... may take another member
  int32_t NextItem() const;     // the schema node of the open array's next item
  bool Blank(unsigned char c);  // a whitespace byte outside strings

  const shared::JsonSchema* schema_;
  Mode mode_ = Mode::kStart;
  uint8_t depth_ = 0;       // containers open
  uint8_t whitespace_ = 0;  // whitespace bytes in a row outside strings
  bool newline_ = false;    // ... the first of which was '\n'
  static constexpr uint16_t kUnbounded = UINT16_MAX;
  uint16_t str_chars_ = 0;  // characters of the string being read (saturating)
  uint16_t str_min_ = 0;    // ... its bounds (a schema's minLength / maxLength)
  uint16_t str_max_ = kUnbounded;
  uint8_t number_bytes_ = 0;                // bytes of the number being read
  uint8_t number_limit_ = kMaxNumberBytes;  // ... at most
  uint8_t exponent_digits_ = 0;
  uint8_t utf8_left_ = 0;   // continuation bytes the string's code point still needs
  uint8_t utf8_lo_ = 0x80;  // the range of the next continuation byte
  uint8_t utf8_hi_ = 0xbf;
  uint8_t hex_left_ = 0;
  bool key_ = false;             // the string being read is an object key
  bool low_ = false;             // the \u escape being read must be a low surrogate
  bool integer_ = false;         // the number being read may have no fraction or exponent
  shared::NumberDigits digits_;  // ... its digits so far, when an integer or bounded
  int64_t int_lo_ = 0;           // ... an integer's bounds (the schema's, inclusive)
  int64_t int_hi_ = 0;
  const shared::NumberRange* range_ = nullptr;  // ... a bounded number's (null: unbounded)
  uint16_t hex_ = 0;                            // the \u escape's digits so far
  uint16_t key_off_ = 0;                        // kKeyMatch: bytes of the key read
  uint16_t lit_off_ = 0;                        // kEnum: bytes of the value read
  int32_t lit_lo_ = 0;                          // kEnum: the literals still possible
  int32_t lit_hi_ = 0;
  int32_t value_node_ = 0;    // the node of the value after the key just read
  uint64_t key_mask_ = 0;     // kKeyMatch: bit i = the top object's property i is still possible
  const char* literal_ = "";  // the rest of the literal being read
  Frame frames_[kMaxDepth] = {};  // the open objects and arrays, outermost first
};

// Sets to -infinity the logit of every token that cannot continue `state`: tokens whose bytes
// JsonPrefix refuses, tokens with no bytes (BOS, EOS and other control tokens: the object's end
// ends generation instead) and ids past the vocabulary. Returns the tokens left (0: none can
// continue; the caller must not draw). Allocates nothing.
int MaskJsonLogits(const JsonPrefix& state, const TokenBytes& vocab, std::span<float> logits);

}  // namespace smallmind::worker
