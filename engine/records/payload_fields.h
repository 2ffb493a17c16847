// Reading and writing the fields of a record's FlexBuffer payload (a map
// per object, as the record codecs in engine/records/payloads.h lay them
// out).
//
// PayloadReader reads one map strictly: a field of the wrong type, or a
// required field that is absent or null, fails the whole payload with a
// message naming the object and the field ("passport field 'name' must be
// a string", "channel.participants[0] is missing required key 'role'"). An
// absent optional field keeps the target's default; null sets an optional
// target to nullopt. The first failure is kept; later reads do nothing.
#pragma once

#include <flatbuffers/flexbuffers.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/base/json_text.h"

namespace parley::engine {

// Whether a field must be present (and not null).
enum class Presence { kOptional, kRequired };

class PayloadReader {
 public:
  // `error` is shared by every reader of one payload; `where` names the
  // object in messages. `object` must be a map, else the payload fails; a
  // null reference reads as an empty map.
  PayloadReader(flexbuffers::Reference object, std::string where,
                std::optional<std::string>& error);

  void text(const char* key, std::string& out,
            Presence presence = Presence::kOptional);
  void text(const char* key, std::optional<std::string>& out);
  void integer(const char* key, std::int64_t& out,
               Presence presence = Presence::kOptional);
  void integer(const char* key, std::optional<std::int64_t>& out);
  // An integer or a float.
  void number(const char* key, std::optional<double>& out);
  void text_list(const char* key, std::vector<std::string>& out,
                 Presence presence = Presence::kOptional);
  // Any value, as JSON text; absent or null keeps `out`'s default.
  void json(const char* key, JsonText& out);
  // Any value but null, as JSON text.
  void json(const char* key, std::optional<JsonText>& out);

  // The map at `key`; an absent (or null) optional one reads as empty.
  PayloadReader object(const char* key,
                       Presence presence = Presence::kOptional);
  // Calls read(item) for each element of the vector of maps at `key`.
  template <typename Read>
  void each(const char* key, Read read,
            Presence presence = Presence::kOptional) {
    const auto items = vector(key, presence);
    for (std::size_t i = 0; i < items.size() && !error_; ++i) {
      read(PayloadReader(items[i],
                         where_ + "." + key + "[" + std::to_string(i) + "]",
                         error_));
    }
  }
  // Calls read(name, value) for each entry of the map at `key`, in key
  // order; `where` + "." + name names the entry.
  template <typename Read>
  void each_entry(const char* key, Read read) {
    const PayloadReader entries = object(key);
    const auto keys = entries.map_.Keys();
    const auto values = entries.map_.Values();
    for (std::size_t i = 0; i < keys.size() && !error_; ++i) {
      read(std::string_view(keys[i].AsKey()), values[i]);
    }
  }
  // A reader of `object`, a map inside this one named `where`, that fails
  // the same payload.
  PayloadReader nested(flexbuffers::Reference object, std::string where) {
    return PayloadReader(object, std::move(where), error_);
  }

  // The value at `key`: nullopt when absent or null (failing the payload
  // when it is required).
  std::optional<flexbuffers::Reference> value(
      const char* key, Presence presence = Presence::kOptional);

  // Fails the payload: "<where> field '<key>' must be <type>".
  void wrong_type(std::string_view key, std::string_view type);

 private:
  flexbuffers::Vector vector(const char* key, Presence presence);

  flexbuffers::Map map_;
  std::string where_;
  std::optional<std::string>& error_;
};

// The root of a payload (verified FlexBuffer data); null when empty.
inline flexbuffers::Reference payload_root(
    std::span<const std::uint8_t> bytes) {
  return bytes.empty() ? flexbuffers::Reference()
                       : flexbuffers::GetRoot(bytes.data(), bytes.size());
}

// Decodes the map `root` with read(PayloadReader&, T&) into a T named
// `what` in messages; kStorage with the first failure.
template <typename T, typename Read>
Result<T> read_payload(flexbuffers::Reference root, std::string_view what,
                       Read read) {
  std::optional<std::string> error;
  T out;
  if (!root.IsMap()) {
    error = std::string(what) + " is missing or not an object";
  } else {
    PayloadReader reader(root, std::string(what), error);
    read(reader, out);
  }
  if (error) return fail(ErrorKind::kStorage, std::move(*error));
  return out;
}

// Writes the fields of the map being built in `builder`; the first
// JsonText that cannot be stored is kept as the failure.
class PayloadWriter {
 public:
  explicit PayloadWriter(flexbuffers::Builder& builder) : builder_(builder) {}

  void text(const char* key, std::string_view value);
  void text(const char* key, const std::string& value) {
    text(key, std::string_view(value));
  }
  // null when absent.
  void text(const char* key, const std::optional<std::string>& value);
  void integer(const char* key, const std::optional<std::int64_t>& value);
  void text_list(const char* key, const std::vector<std::string>& values);
  void json(const char* key, const JsonText& value);
  // null when absent.
  void json(const char* key, const std::optional<JsonText>& value);
  // The map at `key`, its fields written by write().
  template <typename Write>
  void object(const char* key, Write write) {
    const auto start = builder_.StartMap(key);
    write();
    builder_.EndMap(start);
  }
  // The list of maps at `key`, one per item, written by write(item).
  template <typename Items, typename Write>
  void each(const char* key, const Items& items, Write write) {
    const auto list = builder_.StartVector(key);
    for (const auto& item : items) {
      const auto start = builder_.StartMap();
      write(item);
      builder_.EndMap(start);
    }
    builder_.EndVector(list, false, false);
  }

  flexbuffers::Builder& builder() { return builder_; }
  std::optional<Error>& failure() { return failure_; }

 private:
  flexbuffers::Builder& builder_;
  std::optional<Error> failure_;
};

// The payload whose root map write(PayloadWriter&) fills in.
template <typename Write>
Result<FlexBytes> write_payload(Write write) {
  flexbuffers::Builder builder;
  PayloadWriter writer(builder);
  const auto start = builder.StartMap();
  write(writer);
  if (writer.failure()) return std::unexpected(std::move(*writer.failure()));
  builder.EndMap(start);
  builder.Finish();
  return builder.GetBuffer();
}

}  // namespace parley::engine
