#include "engine/records/payload_fields.h"

#include <limits>

#include "engine/base/flex_text.h"

namespace parley::engine {

PayloadReader::PayloadReader(flexbuffers::Reference object, std::string where,
                             std::optional<std::string>& error)
    : map_(flexbuffers::Map::EmptyMap()),
      where_(std::move(where)),
      error_(error) {
  if (object.IsMap()) {
    map_ = object.AsMap();
  } else if (!object.IsNull() && !error_) {
    error_ = where_ + " must be an object";
  }
}

void PayloadReader::wrong_type(std::string_view key, std::string_view type) {
  if (error_) return;
  error_ =
      where_ + " field '" + std::string(key) + "' must be " + std::string(type);
}

std::optional<flexbuffers::Reference> PayloadReader::value(const char* key,
                                                           Presence presence) {
  if (error_) return std::nullopt;
  flexbuffers::Reference value = map_[key];
  if (!value.IsNull()) return value;
  if (presence == Presence::kRequired) {
    error_ = where_ + " is missing required key '" + key + "'";
  }
  return std::nullopt;
}

void PayloadReader::text(const char* key, std::string& out, Presence presence) {
  const auto found = this->value(key, presence);
  if (!found) return;
  if (!found->IsString()) return wrong_type(key, "a string");
  const auto text = found->AsString();
  out.assign(text.c_str(), text.size());
}

void PayloadReader::text(const char* key, std::optional<std::string>& out) {
  out.reset();
  const auto found = this->value(key, Presence::kOptional);
  if (!found) return;
  if (!found->IsString()) return wrong_type(key, "a string or null");
  const auto text = found->AsString();
  out.emplace(text.c_str(), text.size());
}

void PayloadReader::integer(const char* key, std::int64_t& out,
                            Presence presence) {
  const auto found = this->value(key, presence);
  if (!found) return;
  if (found->IsInt()) {
    out = found->AsInt64();
  } else if (found->IsUInt() &&
             found->AsUInt64() <=
                 static_cast<std::uint64_t>(
                     std::numeric_limits<std::int64_t>::max())) {
    out = static_cast<std::int64_t>(found->AsUInt64());
  } else {
    wrong_type(key, "an integer");
  }
}

void PayloadReader::integer(const char* key, std::optional<std::int64_t>& out) {
  out.reset();
  if (error_ || map_[key].IsNull()) return;
  std::int64_t value = 0;
  integer(key, value);
  if (!error_) out = value;
}

void PayloadReader::number(const char* key, std::optional<double>& out) {
  out.reset();
  const auto found = this->value(key, Presence::kOptional);
  if (!found) return;
  if (found->IsInt()) {
    out = static_cast<double>(found->AsInt64());
  } else if (found->IsUInt()) {
    out = static_cast<double>(found->AsUInt64());
  } else if (found->IsFloat()) {
    out = found->AsDouble();
  } else {
    wrong_type(key, "a number or null");
  }
}

flexbuffers::Vector PayloadReader::vector(const char* key, Presence presence) {
  const auto found = this->value(key, presence);
  if (!found) return flexbuffers::Vector::EmptyVector();
  if (!found->IsUntypedVector()) {
    wrong_type(key, "a list");
    return flexbuffers::Vector::EmptyVector();
  }
  return found->AsVector();
}

void PayloadReader::text_list(const char* key, std::vector<std::string>& out,
                              Presence presence) {
  if (!this->value(key, presence)) return;  // absent: the default
  const auto items = vector(key, presence);
  out.clear();
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i].IsString()) return wrong_type(key, "a list of strings");
    const auto text = items[i].AsString();
    out.emplace_back(text.c_str(), text.size());
  }
}

void PayloadReader::json(const char* key, JsonText& out) {
  const auto found = this->value(key, Presence::kOptional);
  if (!found) return;  // absent or null: the default
  out.clear();
  if (!append_json_text(*found, out)) wrong_type(key, "JSON with UTF-8 text");
}

void PayloadReader::json(const char* key, std::optional<JsonText>& out) {
  out.reset();
  const auto found = this->value(key, Presence::kOptional);
  if (!found) return;
  out.emplace();
  if (!append_json_text(*found, *out)) {
    wrong_type(key, "JSON with UTF-8 text");
  }
}

PayloadReader PayloadReader::object(const char* key, Presence presence) {
  const auto found = this->value(key, presence);
  if (found && !found->IsMap()) wrong_type(key, "an object");
  return PayloadReader(
      found && found->IsMap() ? *found : flexbuffers::Reference(),
      where_ + "." + key, error_);
}

void PayloadWriter::text(const char* key, std::string_view value) {
  builder_.Key(key);
  builder_.String(value.data(), value.size());
}

void PayloadWriter::text(const char* key,
                         const std::optional<std::string>& value) {
  if (value) {
    text(key, *value);
  } else {
    builder_.Null(key);
  }
}

void PayloadWriter::integer(const char* key,
                            const std::optional<std::int64_t>& value) {
  if (value) {
    builder_.Int(key, *value);
  } else {
    builder_.Null(key);
  }
}

void PayloadWriter::text_list(const char* key,
                              const std::vector<std::string>& values) {
  const auto start = builder_.StartVector(key);
  for (const auto& value : values) builder_.String(value.data(), value.size());
  builder_.EndVector(start, false, false);
}

void PayloadWriter::json(const char* key, const JsonText& value) {
  if (failure_) return;
  if (auto added = add_json_text(builder_, key, value); !added) {
    failure_ = std::move(added.error());
  }
}

void PayloadWriter::json(const char* key,
                         const std::optional<JsonText>& value) {
  if (value) {
    json(key, *value);
  } else {
    builder_.Null(key);
  }
}

}  // namespace parley::engine
