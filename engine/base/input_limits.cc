#include "engine/base/input_limits.h"

#include <algorithm>
#include <string>
#include <utility>

namespace parley::engine {

namespace {

// What one linear scan of JSON text (any text: it never parses) finds.
struct JsonShape {
  std::size_t depth = 0;  // deepest nesting of arrays and objects
  // Whether an object key holds U+0000, written "\u0000" (a raw NUL byte
  // cannot be in JSON text); a key is a string followed, after any
  // whitespace, by ':'.
  bool nul_key = false;
};

JsonShape json_shape(std::string_view text) {
  JsonShape shape;
  std::size_t depth = 0;
  bool in_string = false;
  bool string_has_nul = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        if (text.substr(i + 1, 5) == "u0000") string_has_nul = true;
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
        if (!string_has_nul) continue;
        const std::size_t next = text.find_first_not_of(" \t\r\n", i + 1);
        if (next != std::string_view::npos && text[next] == ':') {
          shape.nul_key = true;
        }
      }
    } else if (c == '"') {
      in_string = true;
      string_has_nul = false;
    } else if (c == '[' || c == '{') {
      shape.depth = std::max(shape.depth, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return shape;
}

}  // namespace

std::size_t json_depth(std::string_view text) { return json_shape(text).depth; }

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t extra = 0;
    unsigned char low = 0x80;  // bounds of the second byte
    unsigned char high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) {
      extra = 1;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      extra = 2;
      if (lead == 0xe0) low = 0xa0;   // no overlong forms
      if (lead == 0xed) high = 0x9f;  // no surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      extra = 3;
      if (lead == 0xf0) low = 0x90;   // no overlong forms
      if (lead == 0xf4) high = 0x8f;  // nothing above U+10FFFF
    } else {
      return false;
    }
    if (i + extra >= text.size()) return false;  // cut short
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto byte = static_cast<unsigned char>(text[i + k]);
      const unsigned char min = k == 1 ? low : 0x80;
      const unsigned char max = k == 1 ? high : 0xbf;
      if (byte < min || byte > max) return false;
    }
    i += extra + 1;
  }
  return true;
}

namespace {

std::unexpected<Error> too_long(std::string_view field, std::size_t size,
                                std::size_t limit) {
  return invalid(std::string(field) + " is " + std::to_string(size) +
                 " bytes; the limit is " + std::to_string(limit));
}

std::unexpected<Error> not_utf8(std::string_view field) {
  return invalid(std::string(field) + " is not valid UTF-8");
}

}  // namespace

Result<void> check_name(std::string_view field, std::string_view value) {
  if (value.size() > kMaxNameBytes) {
    return too_long(field, value.size(), kMaxNameBytes);
  }
  if (!is_valid_utf8(value)) return not_utf8(field);
  return {};
}

Result<void> check_text(std::string_view field, std::string_view value) {
  if (value.size() > kMaxValueBytes) {
    return too_long(field, value.size(), kMaxValueBytes);
  }
  if (!is_valid_utf8(value)) return not_utf8(field);
  return {};
}

Result<void> check_json_text(std::string_view field, std::string_view json,
                             std::size_t max_depth) {
  if (json.size() > kMaxValueBytes) {
    return too_long(field, json.size(), kMaxValueBytes);
  }
  const JsonShape shape = json_shape(json);
  if (shape.depth > max_depth) {
    return invalid(std::string(field) + " nests deeper than " +
                   std::to_string(max_depth) + " levels");
  }
  if (shape.nul_key) {
    return invalid(std::string(field) +
                   ": JSON object keys must not contain NUL characters");
  }
  return {};
}

Result<void> check_envelope(const Envelope& envelope) {
  if (auto checked = check_name("event_type", envelope.event_type); !checked) {
    return checked;
  }
  for (const auto& [field, value] :
       {std::pair{"idempotency_key", &envelope.idempotency_key},
        std::pair{"trace_id", &envelope.trace_id},
        std::pair{"task_id", &envelope.task_id},
        std::pair{"causation_id", &envelope.causation_id}}) {
    if (!*value) continue;
    if (auto checked = check_name(field, **value); !checked) return checked;
  }
  if (envelope.event_data.size() > kMaxValueBytes) {
    return invalid(
        "event_data is " + std::to_string(envelope.event_data.size()) +
        " bytes encoded; the limit is " + std::to_string(kMaxValueBytes));
  }
  if (envelope.depth < 0) {
    return invalid("envelope field 'depth' must not be negative, got " +
                   std::to_string(envelope.depth));
  }
  if (envelope.ttl_seconds && *envelope.ttl_seconds < 0) {
    return invalid("envelope field 'ttl_seconds' must not be negative, got " +
                   std::to_string(*envelope.ttl_seconds));
  }
  return {};
}

}  // namespace parley::engine
