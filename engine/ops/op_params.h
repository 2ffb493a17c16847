// The op layer's shared pieces: strict reading of an op's params, the
// PARLEY_TRY/PARLEY_CHECK macros, result helpers and the op table type.
// Included only by engine/ops/*.cc (it pulls in nlohmann/json).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/error.h"
#include "engine/hub/hub.h"
#include "engine/ops/answer.h"
#include "engine/ops/authorization.h"

// Binds `name` to the value of a Result expression, or returns its error.
#define PARLEY_TRY(name, expression)                                 \
  auto name##_result = (expression);                                 \
  if (!name##_result) return std::unexpected(name##_result.error()); \
  auto& name = *name##_result

// Returns the error of a Result<void> expression, if any.
#define PARLEY_CHECK(expression)             \
  if (auto checked = (expression); !checked) \
  return std::unexpected(checked.error())

namespace parley::engine::op_layer {

using nlohmann::json;

// Strict reading of one op's params (a missing param is a generic "error"
// naming the key, as AG2's KeyError does).
class Params {
 public:
  explicit Params(const json& params) : params_(params) {}

  Result<void> only(std::initializer_list<std::string_view> keys) const {
    for (const auto& [key, value] : params_.items()) {
      if (std::ranges::find(keys, key) == keys.end()) {
        return invalid("unexpected param '" + key + "'");
      }
    }
    return {};
  }

  Result<const json*> required(std::string_view key) const {
    auto it = params_.find(std::string(key));
    if (it == params_.end()) return invalid("'" + std::string(key) + "'");
    return &*it;
  }

  // Absent and null both read as nullptr.
  const json* optional(std::string_view key) const {
    auto it = params_.find(std::string(key));
    return it == params_.end() || it->is_null() ? nullptr : &*it;
  }

  Result<std::string> text(std::string_view key) const {
    PARLEY_TRY(value, required(key));
    return as_text(key, *value);
  }

  Result<std::optional<std::string>> optional_text(std::string_view key) const {
    const json* value = optional(key);
    if (!value) return std::optional<std::string>{};
    PARLEY_TRY(text, as_text(key, *value));
    return std::optional<std::string>(text);
  }

  Result<std::optional<std::int64_t>> optional_integer(
      std::string_view key) const {
    const json* value = optional(key);
    if (!value) return std::optional<std::int64_t>{};
    if (!value->is_number_integer()) return wrong_type(key, "an integer");
    return std::optional<std::int64_t>(value->get<std::int64_t>());
  }

  Result<json> object(std::string_view key) const {
    PARLEY_TRY(value, required(key));
    if (!value->is_object()) return wrong_type(key, "an object");
    return *value;
  }

  Result<std::optional<json>> optional_object(std::string_view key) const {
    const json* value = optional(key);
    if (!value) return std::optional<json>{};
    if (!value->is_object()) return wrong_type(key, "an object");
    return std::optional<json>(*value);
  }

  Result<std::vector<std::string>> texts(std::string_view key) const {
    PARLEY_TRY(value, required(key));
    if (!value->is_array()) return wrong_type(key, "a list of strings");
    std::vector<std::string> out;
    for (const json& element : *value) {
      if (!element.is_string()) return wrong_type(key, "a list of strings");
      out.push_back(element.get<std::string>());
    }
    return out;
  }

 private:
  static std::unexpected<Error> wrong_type(std::string_view key,
                                           std::string_view type) {
    return invalid("param '" + std::string(key) + "' must be " +
                   std::string(type));
  }
  static Result<std::string> as_text(std::string_view key, const json& value) {
    if (!value.is_string()) return wrong_type(key, "a string");
    return value.get<std::string>();
  }

  const json& params_;
};

template <typename T>
json list_json(const std::vector<T>& items) {
  json out = json::array();
  for (const auto& item : items) out.push_back(to_json(item));
  return out;
}

inline Result<json> done(const Result<void>& result) {
  if (!result) return std::unexpected(result.error());
  return json(nullptr);
}

// A Mutation from a completion-style hub call, `start(done, dispatch)`,
// whose value `to_answer` turns into AG2's JSON.
template <typename T, typename Start, typename ToAnswer>
Mutation mutation(Start start, ToAnswer to_answer) {
  return [start = std::move(start), to_answer = std::move(to_answer)](
             Dispatch dispatch, Reply reply) mutable {
    start(Done<T>([reply = std::move(reply), to_answer](Result<T> result) {
            if (!result) return reply(std::unexpected(result.error()));
            reply(to_answer(*result));
          }),
          dispatch);
  };
}

// A Mutation from a completion-style hub call answering nothing: JSON null.
template <typename Start>
Mutation mutation(Start start) {
  return [start = std::move(start)](Dispatch dispatch, Reply reply) mutable {
    start(Done<void>([reply = std::move(reply)](Result<void> result) {
            reply(done(result));
          }),
          dispatch);
  };
}

// One op: params in (already checked to be an object), AG2's JSON out, at
// once or from a Mutation. `wire` is null for in-process calls; for a wire
// request it is set once authorize() (engine/ops/authorization.h) let the
// request through, for the ops that behave differently over the wire. It
// lives only for the call, so a Mutation copies what it needs of it.
using Op =
    std::function<Result<Answer>(Hub&, const Params&, const WireRequest*)>;
using OpTable = std::map<std::string, Op, std::less<>>;

}  // namespace parley::engine::op_layer
