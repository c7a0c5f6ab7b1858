// The byte walks both JSON constraint fuzz targets run: take the input while JsonPrefix accepts
// it, then close what it took. Header-only, for the fuzz targets (built apart, tests/fuzz).
#pragma once

#include <string>
#include <string_view>

#include "worker/sample/json_constraint.h"

namespace smallmind::fuzz {

// Feeds `state` the bytes of `input` up to the first it refuses; returns the bytes it took.
inline std::string TakeWhileAccepted(worker::JsonPrefix& state, std::string_view input) {
  std::string text;
  for (char c : input) {
    worker::JsonPrefix next = state;
    if (!next.Feed(static_cast<unsigned char>(c))) break;
    state = next;
    text.push_back(c);
  }
  return text;
}

// Appends to `text` (and feeds `state`) one byte a step until `state` is complete or `max_steps`
// steps went by: the first byte of `closers` it takes, else, with `any_byte`, the lowest other
// byte it takes (blanks last: outside keys, strings and enum values they never bring the end
// nearer). False when a step found no byte to take.
inline bool CloseWith(worker::JsonPrefix& state, std::string_view closers, bool any_byte,
                      int max_steps, std::string* text) {
  const auto take = [&](unsigned char c) {
    worker::JsonPrefix next = state;
    if (!next.Feed(c)) return false;
    state = next;
    text->push_back(static_cast<char>(c));
    return true;
  };
  for (int step = 0; step < max_steps && !state.complete(); step++) {
    bool took = false;
    for (char c : closers) {
      if ((took = take(static_cast<unsigned char>(c)))) break;
    }
    for (int i = 0; any_byte && !took && i < 256 + 3; i++) {
      const int c = i < 256 ? i : " \t\n"[i - 256];
      if (i < 256 && (c == ' ' || c == '\t' || c == '\n')) continue;
      took = take(static_cast<unsigned char>(c));
    }
    if (!took) return false;
  }
  return true;
}

}  // namespace smallmind::fuzz
