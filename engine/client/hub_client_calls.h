// How HubClient's typed calls are made (internal to the client library):
// each builds the op's JSON params, starts the call on the client's strand
// and turns the JSON result into its C++ type, or into kInvalid
// "unreadable answer: <why>" when the hub answered something else.
#pragma once

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/client/hub_client_impl.h"

namespace parley::client::calls {

using JsonDone = std::function<void(Result<nlohmann::json>)>;

// Starts `op` with `params` on the client's strand (`timeout` 0: default).
inline void start(const std::shared_ptr<HubClientImpl>& impl, std::string op,
                  nlohmann::json params, JsonDone done,
                  std::chrono::milliseconds timeout = {}) {
  boost::asio::dispatch(impl->strand(),
                        [impl, op = std::move(op), params = std::move(params),
                         timeout, done = std::move(done)]() mutable {
                          impl->start_call(std::move(op), std::move(params),
                                           timeout, std::move(done));
                        });
}

// start() with the params `build()` returns. Building parses the caller's
// JSON text: text that is not JSON fails the call with kInvalid "invalid
// JSON text: <why>", nothing sent.
template <typename Build>
void start_built(const std::shared_ptr<HubClientImpl>& impl, std::string op,
                 Build build, JsonDone done,
                 std::chrono::milliseconds timeout = {}) {
  nlohmann::json params;
  try {
    params = build();
  } catch (const nlohmann::json::exception& error) {
    return boost::asio::post(impl->strand(), [done = std::move(done),
                                              why = std::string(error.what())] {
      done(client_error(code::kInvalid, "invalid JSON text: " + why));
    });
  }
  start(impl, std::move(op), std::move(params), std::move(done), timeout);
}

// Out of line: GCC 12 inlining a json read through std::expected's storage
// reports a false maybe-uninitialized.
template <typename Parse>
[[gnu::noinline]] auto parse_value(const Parse& parse,
                                   const nlohmann::json& value) {
  return parse(value);
}

// `done` told the result read by `parse` (json -> engine::Result<T>).
template <typename T, typename Parse>
JsonDone parsed(Handler<T> done, Parse parse) {
  return [done = std::move(done), parse](Result<nlohmann::json> result) {
    if (!result) return done(std::unexpected(std::move(result.error())));
    auto value = parse_value(parse, *result);
    if (!value) {
      return done(client_error(code::kInvalid,
                               "unreadable answer: " + value.error().message));
    }
    done(std::move(*value));
  };
}

// `done` told success whatever the op's result (ops answering null).
inline JsonDone ignored(Handler<void> done) {
  return [done = std::move(done)](Result<nlohmann::json> result) {
    if (!result) return done(std::unexpected(std::move(result.error())));
    done({});
  };
}

// A reader of a JSON list whose items `parse_item` reads; `op` names the
// op in the refusal of a non-list.
template <typename T, typename ParseItem>
auto list_of(std::string op, ParseItem parse_item) {
  return [op = std::move(op), parse_item](
             const nlohmann::json& value) -> engine::Result<std::vector<T>> {
    if (!value.is_array()) return engine::invalid(op + " answered a non-list");
    std::vector<T> items;
    items.reserve(value.size());
    for (const nlohmann::json& item : value) {
      auto read = parse_item(item);
      if (!read) return std::unexpected(read.error());
      items.push_back(std::move(*read));
    }
    return items;
  };
}

// A reader of a JSON string (or of null, as nullopt, when T is optional).
template <typename T>
auto text(std::string op) {
  return
      [op = std::move(op)](const nlohmann::json& value) -> engine::Result<T> {
        if constexpr (!std::is_same_v<T, std::string>) {
          if (value.is_null()) return T();
        }
        if (!value.is_string()) {
          return engine::invalid(op + " answered a non-string");
        }
        return T(value.get<std::string>());
      };
}

}  // namespace parley::client::calls
