#include "engine/base/python_repr.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "engine/base/utf8.h"

namespace parley::engine {

namespace {

// Whether Python's `repr` escapes `cp`: exact for U+0000..U+00FF, the
// Unicode separators and the common format characters; other code points
// are printed as they are.
bool repr_escapes(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp == 0xad) return true;
  if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200f) ||
      (cp >= 0x2028 && cp <= 0x202f) || (cp >= 0x205f && cp <= 0x2064) ||
      cp == 0x3000 || cp == 0xfeff) {
    return true;
  }
  return cp >= 0xd800 && cp <= 0xdfff;
}

void append_repr(std::string& out, std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  out += quote;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t start = i;
    const char32_t cp = next_code_point(text, i);
    if (cp == '\\' || cp == static_cast<char32_t>(quote)) {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (repr_escapes(cp)) {
      char buffer[12];
      std::snprintf(buffer, sizeof buffer, cp <= 0xff ? "\\x%02x" : "\\u%04x",
                    static_cast<unsigned>(cp));
      out += buffer;
    } else {
      out += text.substr(start, i - start);
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

std::string single_quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  out += text;
  out += '\'';
  return out;
}

std::string channel_label(std::string_view channel_id) {
  return "channel " + single_quoted(channel_id);
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
