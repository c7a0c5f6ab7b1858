// SchemaAllows: JSON Schema validation, written from the specification's rules for the keywords
// shared::JsonSchema compiles (type, properties, required, additionalProperties, items,
// prefixItems, additionalItems, minItems, maxItems, minLength, maxLength, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum (as doubles, as most clients read numbers), enum, const,
// anyOf, oneOf, allOf, local $ref), plus the output constraint's own promise that properties come
// in the schema's order (a union's discriminator, a required const/enum property, may come first).
// A check for tests, independent of the compiler it checks.
#pragma once

#include <nlohmann/json.hpp>

namespace smallmind::testing {

bool SchemaAllows(const nlohmann::ordered_json& value, const nlohmann::ordered_json& schema);

}  // namespace smallmind::testing
