#include "engine/transport/hot_frames.h"

#include <flatbuffers/flexbuffers.h>
#include <simdjson.h>

#include <algorithm>
#include <boost/container/small_vector.hpp>

#include "engine/base/input_limits.h"

namespace parley::transport {
namespace {

namespace dom = simdjson::dom;
using Type = dom::element_type;

// Larger frames take the slow path, so a thread's parser never keeps more
// than this (and its tape) allocated.
constexpr std::size_t kMaxHotFrameBytes = 64 * 1024;

// Whether a number is written as `-0`: nlohmann reads a signed integer,
// simdjson a plain 0, which write_flex would store unsigned. Text in a
// string may match too; that only costs the slow path. Every other
// difference between the parsers ends in a simdjson error, so such a frame
// goes the slow path: raw control bytes in a string, lone surrogate
// escapes, integers beyond 64 bits and numbers out of a double's range.
bool has_negative_zero(std::string_view text) {
  for (std::size_t at = text.find("-0"); at != std::string_view::npos;
       at = text.find("-0", at + 1)) {
    // A fraction or an exponent makes it a double in both; a digit cannot
    // follow a leading 0 in JSON ("-05" is text in a string).
    if (at + 2 == text.size() ||
        std::string_view("0123456789.eE").find(text[at + 2]) ==
            std::string_view::npos) {
      return true;
    }
  }
  return false;
}

// Marks `key` as seen among `keys`; false when it was seen before or is
// not one of them.
template <std::size_t N>
bool first_sight(std::string_view key, const std::string_view (&keys)[N],
                 unsigned& seen) {
  for (std::size_t i = 0; i < N; ++i) {
    if (keys[i] != key) continue;
    if (seen & (1u << i)) return false;
    seen |= 1u << i;
    return true;
  }
  return false;
}

bool read_string(dom::element value, std::string& out) {
  std::string_view text;
  if (value.get_string().get(text)) return false;
  out.assign(text);
  return true;
}

bool read_optional_string(dom::element value, std::optional<std::string>& out) {
  if (value.is_null()) {
    out.reset();
    return true;
  }
  std::string_view text;
  if (value.get_string().get(text)) return false;
  out.emplace(text);
  return true;
}

bool read_integer(dom::element value, std::int64_t& out) {
  return value.type() == Type::INT64 && !value.get_int64().get(out);
}

// event_data as to_flex writes it (engine/base/flex_json.cc): integers
// written without a sign are unsigned there, since nlohmann reads them so.
bool write_flex(flexbuffers::Builder& builder, const char* key,
                dom::element value, std::size_t depth) {
  auto scalar = [&](auto write_keyed, auto write_bare) {
    if (key) {
      write_keyed();
    } else {
      write_bare();
    }
  };
  switch (value.type()) {
    case Type::NULL_VALUE:
      scalar([&] { builder.Null(key); }, [&] { builder.Null(); });
      return true;
    case Type::BOOL: {
      const bool flag = value.get_bool().value_unsafe();
      scalar([&] { builder.Bool(key, flag); }, [&] { builder.Bool(flag); });
      return true;
    }
    case Type::INT64: {
      const std::int64_t number = value.get_int64().value_unsafe();
      if (number >= 0) {  // "-0" never gets here (has_negative_zero)
        const auto unsigned_number = static_cast<std::uint64_t>(number);
        scalar([&] { builder.UInt(key, unsigned_number); },
               [&] { builder.UInt(unsigned_number); });
      } else {
        scalar([&] { builder.Int(key, number); }, [&] { builder.Int(number); });
      }
      return true;
    }
    case Type::UINT64: {
      const std::uint64_t number = value.get_uint64().value_unsafe();
      scalar([&] { builder.UInt(key, number); }, [&] { builder.UInt(number); });
      return true;
    }
    case Type::DOUBLE: {
      const double number = value.get_double().value_unsafe();
      scalar([&] { builder.Double(key, number); },
             [&] { builder.Double(number); });
      return true;
    }
    case Type::STRING: {
      const std::string_view text = value.get_string().value_unsafe();
      scalar(
          [&] {
            builder.Key(key);
            builder.String(text.data(), text.size());
          },
          [&] { builder.String(text.data(), text.size()); });
      return true;
    }
    case Type::ARRAY: {
      if (depth >= engine::kMaxStoredJsonDepth) return false;
      auto start = key ? builder.StartVector(key) : builder.StartVector();
      const dom::array array = value.get_array().value_unsafe();
      for (dom::element element : array) {
        if (!write_flex(builder, nullptr, element, depth + 1)) return false;
      }
      builder.EndVector(start, false, false);
      return true;
    }
    case Type::OBJECT: {
      if (depth >= engine::kMaxStoredJsonDepth) return false;
      // nlohmann's object iterates its keys in byte order, and the keys'
      // bytes land in the buffer in the order they are written.
      struct Field {
        std::string_view key;
        const char* terminated_key;  // the same key, NUL-terminated
        dom::element value;
      };
      boost::container::small_vector<Field, 8> fields;
      const dom::object object = value.get_object().value_unsafe();
      for (auto field = object.begin(); field != object.end(); ++field) {
        if (field.key().find('\0') != std::string_view::npos) return false;
        fields.push_back({field.key(), field.key_c_str(), field.value()});
      }
      std::ranges::sort(fields, {}, &Field::key);
      if (std::ranges::adjacent_find(fields, {}, &Field::key) != fields.end()) {
        return false;
      }
      auto start = key ? builder.StartMap(key) : builder.StartMap();
      for (const Field& field : fields) {
        if (!write_flex(builder, field.terminated_key, field.value,
                        depth + 1)) {
          return false;
        }
      }
      builder.EndMap(start);
      return true;
    }
  }
  return false;
}

// The envelope as records_json's read_envelope reads it, or false for
// anything it would refuse or read differently.
bool read_envelope(dom::object object, engine::Envelope& envelope) {
  static constexpr std::string_view kKeys[] = {
      "channel_id", "sender_id",   "audience", "event_type",
      "event_data", "envelope_id", "task_id",  "causation_id",
      "trace_id",   "priority",    "depth",    "idempotency_key",
      "created_at", "ttl_seconds"};
  unsigned seen = 0;
  for (dom::key_value_pair field : object) {
    if (!first_sight(field.key, kKeys, seen)) return false;
    const std::string_view key = field.key;
    const dom::element value = field.value;
    bool read = false;
    if (key == "channel_id") {
      read = read_string(value, envelope.channel_id);
    } else if (key == "sender_id") {
      read = read_string(value, envelope.sender_id);
    } else if (key == "audience") {
      if (value.is_null()) {
        read = true;
      } else if (value.type() == Type::ARRAY) {
        auto& audience = envelope.audience.emplace();
        read = true;
        const dom::array members = value.get_array().value_unsafe();
        for (dom::element member : members) {
          if (!read_string(member, audience.emplace_back())) return false;
        }
      }
    } else if (key == "event_type") {
      read = read_string(value, envelope.event_type);
    } else if (key == "event_data") {
      if (value.type() != Type::OBJECT) return false;
      // Each thread reuses one builder, so its buffers are allocated once.
      thread_local flexbuffers::Builder builder;
      builder.Clear();
      if (!write_flex(builder, nullptr, value, 0)) return false;
      builder.Finish();
      envelope.event_data = builder.GetBuffer();
      read = true;
    } else if (key == "envelope_id") {
      read = read_string(value, envelope.envelope_id);
    } else if (key == "task_id") {
      read = read_optional_string(value, envelope.task_id);
    } else if (key == "causation_id") {
      read = read_optional_string(value, envelope.causation_id);
    } else if (key == "trace_id") {
      read = read_optional_string(value, envelope.trace_id);
    } else if (key == "priority") {
      read = read_string(value, envelope.priority) &&
             (envelope.priority == "background" ||
              envelope.priority == "normal" || envelope.priority == "urgent");
    } else if (key == "depth") {
      read = read_integer(value, envelope.depth);
    } else if (key == "idempotency_key") {
      read = read_optional_string(value, envelope.idempotency_key);
    } else if (key == "created_at") {
      read = read_string(value, envelope.created_at);
    } else if (key == "ttl_seconds") {
      std::int64_t seconds = 0;
      if (value.is_null()) {
        read = true;
      } else if (read_integer(value, seconds)) {
        envelope.ttl_seconds = seconds;
        read = true;
      }
    }
    if (!read) return false;
  }
  // channel_id, sender_id, audience, event_type and event_data (the first
  // five keys) are required.
  return (seen & 0x1f) == 0x1f;
}

// The decoders below fill the frame where decode_hot_frame returns it,
// so a frame is not moved on its way out; false when it is not plain.

bool decode_request(dom::object frame, PostRequestFrame& post) {
  static constexpr std::string_view kKeys[] = {"request_id", "op", "params",
                                               "kind"};
  unsigned seen = 0;
  for (dom::key_value_pair field : frame) {
    if (!first_sight(field.key, kKeys, seen)) return false;
    if (field.key == "request_id") {
      if (!read_string(field.value, post.request_id)) return false;
    } else if (field.key == "op") {
      std::string_view op;
      if (field.value.get_string().get(op) || op != "post_envelope") {
        return false;
      }
    } else if (field.key == "params") {
      dom::object params;
      if (field.value.get_object().get(params) || params.size() != 1) {
        return false;
      }
      dom::object envelope;
      if (params.at_key("envelope").get_object().get(envelope)) return false;
      post.envelope = std::make_shared<engine::Envelope>();
      if (!read_envelope(envelope, *post.envelope)) return false;
    }
  }
  return seen == 0xf;
}

bool decode_receipt(dom::object frame, ReceiptFrame& receipt) {
  static constexpr std::string_view kKeys[] = {
      "envelope_id", "status", "recipient_id", "channel_id", "reason", "kind"};
  unsigned seen = 0;
  std::string* const fields[] = {&receipt.envelope_id, &receipt.status,
                                 &receipt.recipient_id, &receipt.channel_id,
                                 &receipt.reason};
  for (dom::key_value_pair field : frame) {
    if (!first_sight(field.key, kKeys, seen)) return false;
    for (std::size_t i = 0; i < std::size(fields); ++i) {
      if (field.key == kKeys[i] && !read_string(field.value, *fields[i])) {
        return false;
      }
    }
  }
  // envelope_id, status and kind are required.
  return (seen & 0x23) == 0x23;
}

bool decode(std::string_view text, std::optional<HotFrame>& hot) {
  if (text.size() > kMaxHotFrameBytes || has_negative_zero(text)) {
    return false;
  }
  thread_local dom::parser parser;
  dom::object frame;
  if (parser.parse(text.data(), text.size()).get_object().get(frame)) {
    return false;
  }
  std::string_view kind;
  if (frame.at_key("kind").get_string().get(kind)) return false;
  if (kind == "request") {
    return decode_request(frame, std::get<PostRequestFrame>(hot.emplace(
                                     std::in_place_type<PostRequestFrame>)));
  }
  if (kind == "receipt") {
    return decode_receipt(
        frame,
        std::get<ReceiptFrame>(hot.emplace(std::in_place_type<ReceiptFrame>)));
  }
  return false;
}

}  // namespace

std::optional<HotFrame> decode_hot_frame(std::string_view text) {
  std::optional<HotFrame> hot;  // the one object returned, so not moved
  if (!decode(text, hot)) hot.reset();
  return hot;
}

}  // namespace parley::transport
