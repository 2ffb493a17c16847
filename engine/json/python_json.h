// JSON text exactly as Python's `json.dumps(value)` writes it with default
// arguments, for byte-for-byte agreement with AG2's files, outputs and wire
// frames: ", " and ": " separators; strings with every character outside
// printable ASCII escaped as \uXXXX (lowercase hex, surrogate pairs above
// U+FFFF, \" \\ \b \f \n \r \t short); floats as Python's repr (NaN and the
// infinities as NaN, Infinity, -Infinity); keys in the value's own order.
//
// Text is read as Python reads bytes with "surrogateescape": a byte that
// does not start well-formed UTF-8 is written as \udcXX, never refused.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>

#include "engine/base/envelope.h"

namespace parley::engine {

std::string dump_python(const nlohmann::json& value);
std::string dump_python(const nlohmann::ordered_json& value);

// Appending forms, for writers that assemble a larger text.
void append_python(const nlohmann::json& value, std::string& out);
void append_python(const nlohmann::ordered_json& value, std::string& out);
// A JSON string holding `text`.
void append_python_string(std::string_view text, std::string& out);
// Python's repr() of a float.
void append_python_float(double value, std::string& out);
// A FlexBuffer written by to_flex (engine/base/flex_json.h), verified; an
// empty buffer is written as {} (an envelope that never held data).
void append_python_flex(std::span<const std::uint8_t> flex, std::string& out);
// An envelope in AG2's declaration order: the text of
// dump_python(to_ordered_json(envelope)) without building a JSON tree.
void append_python(const Envelope& envelope, std::string& out);

}  // namespace parley::engine
