// How OpenAI-style message content reaches a chat template. Content may be a string or an array of
// parts ({"type": "text", "text": ...}); templates written for strings cannot take arrays. Like
// vLLM's "auto" mode, a template that loops over a message's content gets the parts as they are
// (kOpenAI); any other gets the text parts joined with "\n" (kString; vLLM and llama.cpp join them
// the same way). Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "gateway/jinja/jinja.h"
#include "shared/status.h"

namespace smallmind::gateway {

enum class ContentFormat : uint8_t {
  kAuto,    // decide from the template (DetectContentFormat)
  kString,  // arrays of text parts become one string
  kOpenAI,  // content goes to the template untouched
};

// kOpenAI when some `for` loop iterates over `<x>.content` / `<x>['content']` (through filters
// too), else kString.
ContentFormat DetectContentFormat(const jinja::Body& body);

// Returns `messages` with array contents flattened for kString; kOpenAI returns them as given.
// Fails on a content part other than text when flattening (there is no text to give it).
shared::Result<nlohmann::ordered_json> PrepareMessages(const nlohmann::ordered_json& messages,
                                                       ContentFormat format);

}  // namespace smallmind::gateway
