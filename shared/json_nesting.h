// JsonNesting: how deep the arrays and objects of a JSON text nest, read without parsing it.
// Parsers and printers that recurse (nlohmann's dump, the schema compiler, a chat template's
// tojson) would run out of stack on a text of a few hundred KiB of '[': the HTTP door and the
// schema compiler measure a client's text with this first and refuse what nests too deep. Pure
// function; thread-safe.
#pragma once

#include <string_view>

namespace smallmind::shared {

// The deepest nesting of '[' and '{' outside strings in `text` (0 for a scalar), counting no
// further than `limit` + 1: a result above `limit` means "too deep". Malformed text gives a
// number too; parsing it is the parser's business.
int JsonNesting(std::string_view text, int limit);

}  // namespace smallmind::shared
