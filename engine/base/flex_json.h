// JSON values as FlexBuffers: how the engine holds `event_data` (and any
// JSON it must read on a hot path) without parsing JSON text.
//
// JSON null, booleans, integers, unsigned integers, doubles, strings,
// arrays and objects map one-to-one onto FlexBuffer types; object keys come
// back sorted (byte order), as AG2's WAL writes them. Object keys must not
// contain NUL (FlexBuffer keys are C strings).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string_view>

#include "engine/base/envelope.h"
#include "engine/base/error.h"

namespace parley::engine {

// Fails with kInvalid when an object key contains NUL or the value nests
// deeper than kMaxStoredJsonDepth (engine/base/input_limits.h).
Result<FlexBytes> to_flex(const nlohmann::json& value);

// Reads a FlexBuffer produced by to_flex (or any valid FlexBuffer of the
// types above). The bytes must have passed the FlatBuffers Verifier.
nlohmann::json flex_to_json(std::span<const std::uint8_t> flex);

// Python's `==` on decoded JSON: 1 == 1.0 == True, 0 == False, containers
// element-wise. What workflow `context_equals` compares with.
bool python_equal(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace parley::engine
