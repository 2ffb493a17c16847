#include "engine/json/python_json.h"

#include <flatbuffers/flexbuffers.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "engine/base/utf8.h"

namespace parley::engine {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Whether any of the 8 bytes in `word` needs escaping: a control character
// (< 0x20), DEL or non-ASCII (>= 0x7f), '"' or '\\'. Exact: a borrow or
// carry between bytes starts only at a byte that needs escaping itself (one
// < 0x20, or 0xff).
bool word_needs_escape(std::uint64_t word) {
  constexpr std::uint64_t kOnes = 0x0101010101010101;
  constexpr std::uint64_t kHigh = 0x8080808080808080;
  auto has_zero = [](std::uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  const std::uint64_t control = (word - kOnes * 0x20) & ~word & kHigh;
  const std::uint64_t high = (word + kOnes) | word;
  return ((control | high) & kHigh) != 0 || has_zero(word ^ (kOnes * '"')) ||
         has_zero(word ^ (kOnes * '\\'));
}

void append_escape(char32_t unit, std::string& out) {
  out += "\\u";
  out += kHex[(unit >> 12) & 0xf];
  out += kHex[(unit >> 8) & 0xf];
  out += kHex[(unit >> 4) & 0xf];
  out += kHex[unit & 0xf];
}

template <typename Integer>
void append_integer(Integer value, std::string& out) {
  char buffer[24];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, end);
}

template <typename J>
void write_tree(const J& value, std::string& out) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::null:
    case Type::binary:
    case Type::discarded:
      out += "null";
      return;
    case Type::boolean:
      out += value.template get<bool>() ? "true" : "false";
      return;
    case Type::number_integer:
      append_integer(value.template get<std::int64_t>(), out);
      return;
    case Type::number_unsigned:
      append_integer(value.template get<std::uint64_t>(), out);
      return;
    case Type::number_float:
      append_python_float(value.template get<double>(), out);
      return;
    case Type::string:
      append_python_string(value.template get_ref<const std::string&>(), out);
      return;
    case Type::array: {
      out += '[';
      bool first = true;
      for (const auto& item : value) {
        if (!first) out += ", ";
        first = false;
        write_tree(item, out);
      }
      out += ']';
      return;
    }
    case Type::object: {
      out += '{';
      bool first = true;
      for (auto it = value.begin(); it != value.end(); ++it) {
        if (!first) out += ", ";
        first = false;
        append_python_string(it.key(), out);
        out += ": ";
        write_tree(it.value(), out);
      }
      out += '}';
      return;
    }
  }
}

void write_flex(flexbuffers::Reference ref, std::string& out);

// A FlexBuffer vector (untyped or typed) as a JSON array.
template <typename Vector>
void write_flex_items(const Vector& vector, std::string& out) {
  out += '[';
  for (std::size_t i = 0; i < vector.size(); ++i) {
    if (i > 0) out += ", ";
    write_flex(vector[i], out);
  }
  out += ']';
}

// The JSON value a FlexBuffer reference holds, as flex_to_json reads it.
void write_flex(flexbuffers::Reference ref, std::string& out) {
  if (ref.IsBool()) {
    out += ref.AsBool() ? "true" : "false";
  } else if (ref.IsInt()) {
    append_integer(ref.AsInt64(), out);
  } else if (ref.IsUInt()) {
    append_integer(ref.AsUInt64(), out);
  } else if (ref.IsFloat()) {
    append_python_float(ref.AsDouble(), out);
  } else if (ref.IsString()) {
    const auto text = ref.AsString();
    append_python_string({text.c_str(), text.size()}, out);
  } else if (ref.IsKey()) {
    append_python_string(ref.AsKey(), out);
  } else if (ref.IsMap()) {
    const auto map = ref.AsMap();
    const auto keys = map.Keys();
    const auto values = map.Values();
    out += '{';
    for (std::size_t i = 0; i < map.size(); ++i) {
      if (i > 0) out += ", ";
      append_python_string(keys[i].AsKey(), out);
      out += ": ";
      write_flex(values[i], out);
    }
    out += '}';
  } else if (ref.IsUntypedVector()) {
    write_flex_items(ref.AsVector(), out);
  } else if (ref.IsTypedVector() || ref.IsFixedTypedVector()) {
    write_flex_items(ref.AsTypedVector(), out);
  } else {
    out += "null";  // null, and blobs, which to_flex never writes
  }
}

template <typename T>
void append_member(std::string_view key, const T& value, std::string& out,
                   bool first = false) {
  if (!first) out += ", ";
  append_python_string(key, out);
  out += ": ";
  if constexpr (std::is_same_v<T, std::string>) {
    append_python_string(value, out);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    append_integer(value, out);
  } else if constexpr (std::is_same_v<T, std::optional<std::string>> ||
                       std::is_same_v<T, std::optional<std::int64_t>>) {
    if (!value) {
      out += "null";
    } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
      append_python_string(*value, out);
    } else {
      append_integer(*value, out);
    }
  }
}

}  // namespace

void append_python_string(std::string_view text, std::string& out) {
  out.reserve(out.size() + text.size() + 2);
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    // Printable ASCII other than " and \ is copied as a run, found 8 bytes
    // at a time while it lasts.
    std::size_t run = i;
    while (run + 8 <= text.size()) {
      std::uint64_t word;
      std::memcpy(&word, text.data() + run, sizeof word);
      if (word_needs_escape(word)) break;
      run += 8;
    }
    while (run < text.size()) {
      const auto byte = static_cast<unsigned char>(text[run]);
      if (byte < 0x20 || byte >= 0x7f || byte == '"' || byte == '\\') break;
      ++run;
    }
    out.append(text.data() + i, run - i);
    i = run;
    if (i == text.size()) break;
    const char32_t cp = next_code_point(text, i);
    switch (cp) {
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
        if (cp >= 0x10000) {
          const char32_t v = cp - 0x10000;
          append_escape(0xd800 + (v >> 10), out);
          append_escape(0xdc00 + (v & 0x3ff), out);
        } else {
          append_escape(cp, out);
        }
    }
  }
  out += '"';
}

// Python's repr() of a float: the shortest digits that round-trip (closest
// to the exact value; std::to_chars, not nlohmann's Grisu2, which is not
// always shortest/closest), fixed notation when the decimal point position
// `decpt` satisfies -4 < decpt <= 16, else d.ddde[+-]XX.
void append_python_float(double value, std::string& out) {
  if (std::isnan(value)) {
    out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    out += value > 0 ? "Infinity" : "-Infinity";
    return;
  }
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value,
                                 std::chars_format::scientific)
                       .ptr;
  const std::string_view text(buffer, static_cast<std::size_t>(end - buffer));
  const auto e = text.find('e');
  if (text.front() == '-') out += '-';
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '-' && c != '.') digits += c;
  }
  int exponent = 0;
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+' ? 1 : 0),
                  text.data() + text.size(), exponent);
  const int decpt = exponent + 1;  // value = 0.digits * 10^decpt
  const int count = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    out += digits[0];
    if (count > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += exponent < 0 ? "e-" : "e+";
    const int magnitude = exponent < 0 ? -exponent : exponent;
    if (magnitude < 10) out += '0';
    append_integer(magnitude, out);
  } else if (decpt <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-decpt), '0');
    out += digits;
  } else if (decpt >= count) {
    out += digits;
    out.append(static_cast<std::size_t>(decpt - count), '0');
    out += ".0";
  } else {
    out.append(digits, 0, static_cast<std::size_t>(decpt));
    out += '.';
    out.append(digits, static_cast<std::size_t>(decpt));
  }
}

void append_python(const nlohmann::json& value, std::string& out) {
  write_tree(value, out);
}

void append_python(const nlohmann::ordered_json& value, std::string& out) {
  write_tree(value, out);
}

std::string dump_python(const nlohmann::json& value) {
  std::string out;
  write_tree(value, out);
  return out;
}

std::string dump_python(const nlohmann::ordered_json& value) {
  std::string out;
  write_tree(value, out);
  return out;
}

void append_python_flex(std::span<const std::uint8_t> flex, std::string& out) {
  if (flex.empty()) {
    out += "{}";
    return;
  }
  write_flex(flexbuffers::GetRoot(flex.data(), flex.size()), out);
}

void append_python(const Envelope& envelope, std::string& out) {
  out += '{';
  append_member("channel_id", envelope.channel_id, out, /*first=*/true);
  append_member("sender_id", envelope.sender_id, out);
  out += ", \"audience\": ";
  if (!envelope.audience) {
    out += "null";
  } else {
    out += '[';
    bool first = true;
    for (const std::string& id : *envelope.audience) {
      if (!first) out += ", ";
      first = false;
      append_python_string(id, out);
    }
    out += ']';
  }
  append_member("event_type", envelope.event_type, out);
  out += ", \"event_data\": ";
  append_python_flex(envelope.event_data, out);
  append_member("envelope_id", envelope.envelope_id, out);
  append_member("task_id", envelope.task_id, out);
  append_member("causation_id", envelope.causation_id, out);
  append_member("trace_id", envelope.trace_id, out);
  append_member("priority", envelope.priority, out);
  append_member("depth", envelope.depth, out);
  append_member("idempotency_key", envelope.idempotency_key, out);
  append_member("created_at", envelope.created_at, out);
  append_member("ttl_seconds", envelope.ttl_seconds, out);
  out += '}';
}

}  // namespace parley::engine
