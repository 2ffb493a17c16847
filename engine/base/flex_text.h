// Free-form JSON values (JsonText) between their text and a FlexBuffer, for
// the record codecs: a record stores such a value as FlexBuffer data and the
// fold hands it back as text, without building a JSON tree.
//
// The text is compact, as nlohmann::json::dump() writes it: no spaces, map
// keys in byte order, strings in UTF-8 with only '"', '\\' and control
// characters escaped, doubles in their shortest round-trip digits ("1.0",
// "0.001", "1e+16"), NaN and the infinities as null.
#pragma once

#include <flatbuffers/flexbuffers.h>

#include <optional>
#include <string>
#include <string_view>

#include "engine/base/error.h"
#include "engine/base/json_text.h"

namespace parley::engine {

// Appends `value` (any FlexBuffer written by to_flex or add_json_text, and
// verified) as JSON text. False when a string or key in it is not UTF-8:
// the text is then not JSON (only a damaged record, or one written by
// something else than Parley, holds such bytes), and the caller refuses it.
[[nodiscard]] bool append_json_text(flexbuffers::Reference value,
                                    std::string& out);
// `value` as JSON text, or nothing when a string or key in it is not UTF-8.
std::optional<JsonText> flex_to_json_text(flexbuffers::Reference value);

// Adds `text` to `builder` under `key` (a map field; nullptr for a vector
// element or the root). Precondition: `text` is valid JSON (JsonText is
// validated where it enters the engine); invalid text throws
// nlohmann::json::parse_error. Fails with kInvalid, writing nothing usable,
// when an object key contains NUL or the value nests deeper than
// kMaxStoredJsonDepth.
Result<void> add_json_text(flexbuffers::Builder& builder, const char* key,
                           std::string_view text);

}  // namespace parley::engine
