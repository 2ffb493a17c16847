#include "engine/base/flex_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "engine/base/input_limits.h"

namespace parley::engine {

namespace {

// False, writing nothing, when `text` is not UTF-8.
bool append_string(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (!is_valid_utf8(text)) return false;
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (byte < 0x20) {
          out += "\\u00";
          out += kHex[byte >> 4];
          out += kHex[byte & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return true;
}

template <typename Integer>
void append_integer(Integer value, std::string& out) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

// nlohmann's layout of the shortest round-trip digits: fixed notation while
// the decimal point falls within 15 digits of the first one (and no further
// than 4 zeros after the point), else d.ddde±XX; integral values get ".0".
void append_double(double value, std::string& out) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  if (std::signbit(value)) {
    out += '-';
    value = -value;
  }
  if (value == 0) {
    out += "0.0";
    return;
  }
  char scientific[32];
  const auto end = std::to_chars(scientific, scientific + sizeof scientific,
                                 value, std::chars_format::scientific)
                       .ptr;
  // "d.ddde±XX" -> digits "dddd" and n, the position of the decimal point
  // counted from the first digit.
  std::string digits;
  const char* c = scientific;
  for (; c != end && *c != 'e'; ++c) {
    if (*c != '.') digits += *c;
  }
  // to_chars writes no terminator: the exponent is read within [c, end).
  int exponent = 0;
  if (c != end) {
    const char* from = c + 1;
    if (from != end && *from == '+') ++from;
    std::from_chars(from, end, exponent);
  }
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  if (k <= n && n <= 15) {
    out += digits;
    out.append(static_cast<std::size_t>(n - k), '0');
    out += ".0";
  } else if (0 < n && n <= 15) {
    out.append(digits, 0, static_cast<std::size_t>(n));
    out += '.';
    out.append(digits, static_cast<std::size_t>(n));
  } else if (-4 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += 'e';
    const int shown = n - 1;
    out += shown < 0 ? '-' : '+';
    const int magnitude = std::abs(shown);
    if (magnitude < 10) out += '0';
    append_integer(magnitude, out);
  }
}

template <typename Vector>
bool append_items(const Vector& vector, std::string& out) {
  out += '[';
  for (std::size_t i = 0; i < vector.size(); ++i) {
    if (i > 0) out += ',';
    if (!append_json_text(vector[i], out)) return false;
  }
  out += ']';
  return true;
}

}  // namespace

bool append_json_text(flexbuffers::Reference value, std::string& out) {
  if (value.IsNull()) {
    out += "null";
  } else if (value.IsBool()) {
    out += value.AsBool() ? "true" : "false";
  } else if (value.IsInt()) {
    append_integer(value.AsInt64(), out);
  } else if (value.IsUInt()) {
    append_integer(value.AsUInt64(), out);
  } else if (value.IsFloat()) {
    append_double(value.AsDouble(), out);
  } else if (value.IsString()) {
    const auto text = value.AsString();
    return append_string({text.c_str(), text.size()}, out);
  } else if (value.IsKey()) {
    return append_string(value.AsKey(), out);
  } else if (value.IsMap()) {
    const auto map = value.AsMap();
    const auto keys = map.Keys();
    const auto values = map.Values();
    out += '{';
    for (std::size_t i = 0; i < map.size(); ++i) {
      if (i > 0) out += ',';
      if (!append_string(keys[i].AsKey(), out)) return false;
      out += ':';
      if (!append_json_text(values[i], out)) return false;
    }
    out += '}';
  } else if (value.IsUntypedVector()) {
    return append_items(value.AsVector(), out);
  } else if (value.IsTypedVector() || value.IsFixedTypedVector()) {
    return append_items(value.AsTypedVector(), out);
  } else {
    out += "null";  // blobs are never written by to_flex
  }
  return true;
}

std::optional<JsonText> flex_to_json_text(flexbuffers::Reference value) {
  JsonText out;
  if (!append_json_text(value, out)) return std::nullopt;
  return out;
}

}  // namespace parley::engine
