#include "engine/base/flex_json.h"

#include <flatbuffers/flexbuffers.h>

#include <nlohmann/json.hpp>

#include "engine/base/flex_text.h"
#include "engine/base/input_limits.h"

namespace parley::engine {

namespace {

enum class Refusal { kNone, kNulKey, kTooDeep };

// Writes `value`, nested `depth` levels in, unless it nests deeper than
// kMaxStoredJsonDepth: the recursion never goes further than that.
Refusal write(flexbuffers::Builder& builder, const char* key,
              const nlohmann::json& value, std::size_t depth) {
  using Type = nlohmann::json::value_t;
  auto scalar = [&](auto write_keyed, auto write_bare) {
    if (key) {
      write_keyed();
    } else {
      write_bare();
    }
  };
  switch (value.type()) {
    case Type::null:
      scalar([&] { builder.Null(key); }, [&] { builder.Null(); });
      return Refusal::kNone;
    case Type::boolean:
      scalar([&] { builder.Bool(key, value.get<bool>()); },
             [&] { builder.Bool(value.get<bool>()); });
      return Refusal::kNone;
    case Type::number_integer:
      scalar([&] { builder.Int(key, value.get<std::int64_t>()); },
             [&] { builder.Int(value.get<std::int64_t>()); });
      return Refusal::kNone;
    case Type::number_unsigned:
      scalar([&] { builder.UInt(key, value.get<std::uint64_t>()); },
             [&] { builder.UInt(value.get<std::uint64_t>()); });
      return Refusal::kNone;
    case Type::number_float:
      scalar([&] { builder.Double(key, value.get<double>()); },
             [&] { builder.Double(value.get<double>()); });
      return Refusal::kNone;
    case Type::string: {
      const auto& text = value.get_ref<const std::string&>();
      scalar([&] { builder.String(key, text); }, [&] { builder.String(text); });
      return Refusal::kNone;
    }
    case Type::array: {
      if (depth >= kMaxStoredJsonDepth) return Refusal::kTooDeep;
      auto start = key ? builder.StartVector(key) : builder.StartVector();
      for (const auto& element : value) {
        if (auto refused = write(builder, nullptr, element, depth + 1);
            refused != Refusal::kNone) {
          return refused;
        }
      }
      builder.EndVector(start, false, false);
      return Refusal::kNone;
    }
    case Type::object: {
      if (depth >= kMaxStoredJsonDepth) return Refusal::kTooDeep;
      auto start = key ? builder.StartMap(key) : builder.StartMap();
      for (const auto& [name, element] : value.items()) {
        if (name.find('\0') != std::string::npos) return Refusal::kNulKey;
        if (auto refused = write(builder, name.c_str(), element, depth + 1);
            refused != Refusal::kNone) {
          return refused;
        }
      }
      builder.EndMap(start);
      return Refusal::kNone;
    }
    case Type::binary:
    case Type::discarded:
      break;
  }
  return Refusal::kNulKey;  // never from parsed JSON
}

// What write() would refuse, found without writing.
Refusal check(const nlohmann::json& value, std::size_t depth) {
  if (!value.is_structured()) return Refusal::kNone;
  if (depth >= kMaxStoredJsonDepth) return Refusal::kTooDeep;
  for (const auto& [name, element] : value.items()) {
    if (value.is_object() && name.find('\0') != std::string::npos) {
      return Refusal::kNulKey;
    }
    if (auto refused = check(element, depth + 1); refused != Refusal::kNone) {
      return refused;
    }
  }
  return Refusal::kNone;
}

nlohmann::json read(flexbuffers::Reference ref) {
  if (ref.IsNull()) return nullptr;
  if (ref.IsBool()) return ref.AsBool();
  if (ref.IsInt()) return ref.AsInt64();
  if (ref.IsUInt()) return ref.AsUInt64();
  if (ref.IsFloat()) return ref.AsDouble();
  if (ref.IsString()) {
    auto text = ref.AsString();
    return std::string(text.c_str(), text.size());
  }
  if (ref.IsKey()) return std::string(ref.AsKey());
  if (ref.IsMap()) {
    auto map = ref.AsMap();
    auto keys = map.Keys();
    auto values = map.Values();
    nlohmann::json object = nlohmann::json::object();
    for (std::size_t i = 0; i < map.size(); ++i) {
      object[std::string(keys[i].AsKey())] = read(values[i]);
    }
    return object;
  }
  if (ref.IsUntypedVector()) {
    auto vector = ref.AsVector();
    nlohmann::json array = nlohmann::json::array();
    for (std::size_t i = 0; i < vector.size(); ++i) {
      array.push_back(read(vector[i]));
    }
    return array;
  }
  if (ref.IsTypedVector() || ref.IsFixedTypedVector()) {
    auto vector = ref.AsTypedVector();
    nlohmann::json array = nlohmann::json::array();
    for (std::size_t i = 0; i < vector.size(); ++i) {
      array.push_back(read(vector[i]));
    }
    return array;
  }
  return nullptr;  // blobs never come from to_flex
}

// Python numbers: bool is an int; int and float compare by value.
bool is_number(const nlohmann::json& v) {
  return v.is_number() || v.is_boolean();
}
long double numeric(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_number_unsigned())
    return static_cast<long double>(v.get<std::uint64_t>());
  if (v.is_number_integer())
    return static_cast<long double>(v.get<std::int64_t>());
  return static_cast<long double>(v.get<double>());
}

Result<void> refused(Refusal refusal) {
  switch (refusal) {
    case Refusal::kNone:
      break;
    case Refusal::kNulKey:
      return invalid("JSON object keys must not contain NUL characters");
    case Refusal::kTooDeep:
      return invalid("a JSON value may nest at most " +
                     std::to_string(kMaxStoredJsonDepth) + " levels");
  }
  return {};
}

}  // namespace

Result<FlexBytes> to_flex(const nlohmann::json& value) {
  flexbuffers::Builder builder;
  if (auto written = refused(write(builder, nullptr, value, 0)); !written) {
    return std::unexpected(written.error());
  }
  builder.Finish();
  return builder.GetBuffer();
}

Result<void> add_json_text(flexbuffers::Builder& builder, const char* key,
                           std::string_view text) {
  const nlohmann::json value = nlohmann::json::parse(text);
  // A refused value is found before anything is written, so `builder`
  // stays balanced.
  if (auto storable = refused(check(value, 0)); !storable) return storable;
  (void)write(builder, key, value, 0);
  return {};
}

nlohmann::json flex_to_json(std::span<const std::uint8_t> flex) {
  if (flex.empty()) return nullptr;
  return read(flexbuffers::GetRoot(flex.data(), flex.size()));
}

bool python_equal(const nlohmann::json& a, const nlohmann::json& b) {
  if (is_number(a) && is_number(b)) return numeric(a) == numeric(b);
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!python_equal(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [key, value] : a.items()) {
      auto other = b.find(key);
      if (other == b.end() || !python_equal(value, *other)) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace parley::engine
