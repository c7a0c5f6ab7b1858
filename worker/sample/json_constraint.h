// The JSON output constraint (GenerateRequest.response_format = JSON_OBJECT): JsonPrefix says
// whether the bytes generated so far begin a JSON text (RFC 8259) whose top level is an object,
// and MaskJsonLogits removes, before a request's draw, every token that would make them stop
// doing so. Every prefix JsonPrefix accepts can still be completed, so a vocabulary with a token
// for every byte never runs out of tokens. One JsonPrefix per request, used by one thread at a
// time; the functions are pure.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "worker/tokenizer/token_bytes.h"

namespace smallmind::worker {

class JsonPrefix {
 public:
  static constexpr int kMaxDepth = 64;  // objects and arrays open at once
  // Whitespace bytes in a row outside strings: enough for any indentation a model prints, and a
  // bound on the blanks a small model would otherwise repeat until max_new_tokens. A run holds at
  // most one line break, '\n' ('\r' is refused). Before the object, one whitespace byte at most.
  static constexpr int kMaxWhitespace = 24;
  // Bytes of one number (a double needs at most 24): a model repeating digits gets a delimiter.
  static constexpr int kMaxNumberBytes = 32;
  // Exponent digits: with the byte bound, every number is within a double's range (|x| < 1e131),
  // so no parser refuses it as too large.
  static constexpr int kMaxExponentDigits = 2;

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
  bool between_string_chars() const { return mode_ == Mode::kString && utf8_left_ == 0; }

 private:
  enum class Mode : uint8_t {
    kStart,         // before the top-level object: whitespace or '{'
    kValue,         // a value: after ':' or after ',' in an array
    kArrayFirst,    // after '[': a value or ']'
    kObjectFirst,   // after '{': a key or '}'
    kKey,           // after ',' in an object: a key
    kColon,         // after a key
    kAfterValue,    // after a value inside a container: ',' or the container's close
    kString,        // inside a string (a key when key_)
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

  bool Structural(unsigned char c);
  bool StartValue(unsigned char c);
  bool String(unsigned char c);
  bool Hex(unsigned char c);
  bool Number(unsigned char c);
  bool Open(bool object);
  bool Close();
  bool EndValue();
  bool TopIsObject() const { return (stack_ >> (depth_ - 1)) & 1; }

  Mode mode_ = Mode::kStart;
  uint8_t depth_ = 0;         // containers open
  uint8_t whitespace_ = 0;    // whitespace bytes in a row outside strings
  bool newline_ = false;      // ... one of which was '\n'
  uint8_t number_bytes_ = 0;  // bytes of the number being read
  uint8_t exponent_digits_ = 0;
  uint8_t utf8_left_ = 0;   // continuation bytes the string's code point still needs
  uint8_t utf8_lo_ = 0x80;  // the range of the next continuation byte
  uint8_t utf8_hi_ = 0xbf;
  uint8_t hex_left_ = 0;
  bool key_ = false;          // the string being read is an object key
  bool low_ = false;          // the \u escape being read must be a low surrogate
  uint16_t hex_ = 0;          // the \u escape's digits so far
  uint64_t stack_ = 0;        // bit d: the container at depth d + 1 is an object (else array)
  const char* literal_ = "";  // the rest of the literal being read
};

// Sets to -infinity the logit of every token that cannot continue `state`: tokens whose bytes
// JsonPrefix refuses, tokens with no bytes (BOS, EOS and other control tokens: the object's end
// ends generation instead) and ids past the vocabulary. Returns the tokens left (0: none can
// continue; the caller must not draw). Allocates nothing.
int MaskJsonLogits(const JsonPrefix& state, const TokenBytes& vocab, std::span<float> logits);

}  // namespace smallmind::worker
