#include "engine/base/python_repr.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace parley::engine {

namespace {

void append_hex_escape(std::string& out, unsigned value) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\x%02x", value);
  out += buffer;
}

void append_repr(std::string& out, std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  out += quote;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\\') {
      out += "\\\\";
    } else if (byte == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += quote;
    } else if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      append_hex_escape(out, byte);
    } else if (byte == 0xc2 && i + 1 < text.size()) {
      // U+0080..U+00A0 and U+00AD are not printable for Python.
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next <= 0xa0 || next == 0xad) {
        append_hex_escape(out, next);
        ++i;
      } else {
        out += static_cast<char>(byte);
      }
    } else {
      out += static_cast<char>(byte);
    }
  }
  out += quote;
}

void append_repr(std::string& out, const nlohmann::json& value) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::null:
    case Type::discarded:
    case Type::binary:
      out += "None";
      return;
    case Type::boolean:
      out += value.get<bool>() ? "True" : "False";
      return;
    case Type::number_integer:
    case Type::number_unsigned:
      out += value.dump();
      return;
    case Type::number_float: {
      const double number = value.get<double>();
      if (std::isnan(number)) {
        out += "nan";
      } else if (std::isinf(number)) {
        out += number > 0 ? "inf" : "-inf";
      } else {
        out += value.dump();
      }
      return;
    }
    case Type::string:
      append_repr(out, std::string_view(value.get_ref<const std::string&>()));
      return;
    case Type::array: {
      out += '[';
      bool first = true;
      for (const auto& element : value) {
        if (!first) out += ", ";
        first = false;
        append_repr(out, element);
      }
      out += ']';
      return;
    }
    case Type::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, element] : value.items()) {
        if (!first) out += ", ";
        first = false;
        append_repr(out, std::string_view(key));
        out += ": ";
        append_repr(out, element);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string python_repr(std::string_view text) {
  std::string out;
  append_repr(out, text);
  return out;
}

std::string python_repr_json(const nlohmann::json& value) {
  std::string out;
  append_repr(out, value);
  return out;
}

std::string python_repr_list(std::span<const std::string> texts) {
  std::string out = "[";
  bool first = true;
  for (const auto& text : texts) {
    if (!first) out += ", ";
    first = false;
    append_repr(out, std::string_view(text));
  }
  out += ']';
  return out;
}

}  // namespace parley::engine
