#include "engine/json/python_json.h"

#include <flatbuffers/flexbuffers.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "engine/base/utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace parley::engine {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// The length of the longest prefix of `text` written as it is: printable
// ASCII other than '"' and '\\'. Where SSE2 is there (every x86-64) it
// checks 16 bytes at a time: a text of 16 bytes or more ends with one
// block that overlaps what was found plain, a shorter one is checked as one
// block padded with plain bytes, so no text ends in a loop over single
// bytes. Elsewhere a byte at a time.
std::size_t plain_prefix(std::string_view text) {
  const char* const data = text.data();
  const std::size_t size = text.size();
#if defined(__SSE2__)
  // A bit per byte of the 16 at `at` that needs escaping. Compared as
  // signed bytes, "< 0x20" also takes every byte >= 0x80.
  const auto escaped = [](const char* at) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    const __m128i needs =
        _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20)),
                                  _mm_cmpeq_epi8(bytes, _mm_set1_epi8(0x7f))),
                     _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')),
                                  _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'))));
    return static_cast<unsigned>(_mm_movemask_epi8(needs));
  };
  auto first = [](unsigned mask) {
    return static_cast<std::size_t>(std::countr_zero(mask));
  };
  if (size < 16) {
    char block[16];
    std::memset(block, 'a', sizeof block);
    if (size > 0) std::memcpy(block, data, size);
    const unsigned mask = escaped(block);
    return mask != 0 ? first(mask) : size;
  }
  std::size_t i = 0;
  for (; i + 16 <= size; i += 16) {
    if (const unsigned mask = escaped(data + i); mask != 0) {
      return i + first(mask);
    }
  }
  if (i == size) return size;
  // The bytes before `i` are plain, so the first found is at `i` or after.
  const unsigned mask = escaped(data + size - 16);
  return mask != 0 ? size - 16 + first(mask) : size;
#else
  std::size_t i = 0;
  while (i < size) {
    const auto byte = static_cast<unsigned char>(data[i]);
    if (byte < 0x20 || byte >= 0x7f || byte == '"' || byte == '\\') break;
    ++i;
  }
  return i;
#endif
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

// A member: `separator_and_key` is the literal text before its value, e.g.
// `, "sender_id": ` (keys here are printable ASCII, written as they are).
template <typename T>
void append_member(std::string_view separator_and_key, const T& value,
                   std::string& out) {
  out += separator_and_key;
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
  std::size_t run = plain_prefix(text);
  if (run == text.size()) {
    // Nothing to escape (every id, most text): quotes and one copy, with
    // no check a character. (GCC 12's resize_and_overwrite may pass the
    // new capacity rather than the size asked for: the size is ours.)
    const std::size_t at = out.size();
    const std::size_t size = at + text.size() + 2;
    out.resize_and_overwrite(size, [&](char* data, std::size_t) {
      data[at] = '"';
      std::memcpy(data + at + 1, text.data(), text.size());
      data[size - 1] = '"';
      return size;
    });
    return;
  }
  if (out.capacity() - out.size() < text.size() + 2) {
    out.reserve(out.size() + text.size() + 2);
  }
  out += '"';
  while (true) {
    out.append(text.data(), run);
    text.remove_prefix(run);
    if (text.empty()) break;
    std::size_t next = 0;
    const char32_t cp = next_code_point(text, next);
    text.remove_prefix(next);
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
    run = plain_prefix(text);
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
  append_member(R"({"channel_id": )", envelope.channel_id, out);
  append_member(R"(, "sender_id": )", envelope.sender_id, out);
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
  append_member(R"(, "event_type": )", envelope.event_type, out);
  out += ", \"event_data\": ";
  append_python_flex(envelope.event_data, out);
  append_member(R"(, "envelope_id": )", envelope.envelope_id, out);
  append_member(R"(, "task_id": )", envelope.task_id, out);
  append_member(R"(, "causation_id": )", envelope.causation_id, out);
  append_member(R"(, "trace_id": )", envelope.trace_id, out);
  append_member(R"(, "priority": )", envelope.priority, out);
  append_member(R"(, "depth": )", envelope.depth, out);
  append_member(R"(, "idempotency_key": )", envelope.idempotency_key, out);
  append_member(R"(, "created_at": )", envelope.created_at, out);
  append_member(R"(, "ttl_seconds": )", envelope.ttl_seconds, out);
  out += '}';
}

}  // namespace parley::engine
