// AG2's recorded wire session (golden/ag2-wire-trace.jsonl: every frame
// between AG2's remote client and AG2's hub, three connections, all four
// channel types) replayed against parley serve over real sockets: each
// client frame is sent as recorded (with the hub-minted ids it quotes
// replaced by Parley's), and every frame the hub sent must arrive on the
// same connection with the same JSON, key order included. Ids are matched
// by first appearance (a bijection between AG2's and Parley's), hub
// timestamps only by shape, and the key order of free-form objects
// (event_data, knobs, labels), which Parley keeps sorted, is not compared.
// Frames of one connection may arrive in another order than AG2's where
// AG2 ran them one at a time and Parley runs them concurrently. Posts are
// sent one after the other's answer, so that posts AG2 received in one
// order (two invitees acking at once) land in that order here too.
#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "tests/serve_fixture.h"

namespace parley {
namespace {

using nlohmann::ordered_json;
using testing::ServeFixture;
using testing::WsTestClient;
using namespace std::chrono_literals;

bool is_id(const std::string& text) {
  static const std::regex id("[0-9a-f]{32}");
  return std::regex_match(text, id);
}

bool is_time(const std::string& text) {
  static const std::regex time(
      R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?\+00:00)");
  return std::regex_match(text, time);
}

// The id bijection between the trace (golden) and this run (actual).
struct Ids {
  std::map<std::string, std::string> to_actual;
  std::map<std::string, std::string> to_golden;
};

bool free_form(const std::string& key) {
  return key == "event_data" || key == "knobs" || key == "labels" ||
         key == "claim" || key == "params" || key == "payload";
}

// Whether `actual` is `golden` up to ids, times and free-form key order;
// binds new ids into `ids`. `where` collects the first difference.
bool unify(const ordered_json& golden, const ordered_json& actual, Ids& ids,
           bool ordered, std::string& where, const std::string& path = "") {
  if (golden.type() != actual.type()) {
    where = path + ": " + golden.dump() + " vs " + actual.dump();
    return false;
  }
  if (golden.is_string()) {
    const auto& g = golden.get_ref<const std::string&>();
    const auto& a = actual.get_ref<const std::string&>();
    if (is_id(g) && is_id(a)) {
      auto known = ids.to_actual.find(g);
      if (known != ids.to_actual.end()) {
        if (known->second == a) return true;
      } else if (!ids.to_golden.contains(a)) {
        ids.to_actual[g] = a;
        ids.to_golden[a] = g;
        return true;
      }
    } else if ((is_time(g) && is_time(a)) || g == a) {
      return true;
    }
    where = path + ": " + g + " vs " + a;
    return false;
  }
  if (golden.is_array()) {
    if (golden.size() != actual.size()) {
      where = path + ": " + std::to_string(golden.size()) + " items vs " +
              std::to_string(actual.size());
      return false;
    }
    for (std::size_t i = 0; i < golden.size(); ++i) {
      if (!unify(golden[i], actual[i], ids, ordered, where,
                 path + "[" + std::to_string(i) + "]")) {
        return false;
      }
    }
    return true;
  }
  if (golden.is_object()) {
    std::vector<std::string> golden_keys, actual_keys;
    for (const auto& [key, value] : golden.items()) golden_keys.push_back(key);
    for (const auto& [key, value] : actual.items()) actual_keys.push_back(key);
    if (!ordered) {
      std::ranges::sort(golden_keys);
      std::ranges::sort(actual_keys);
    }
    if (golden_keys != actual_keys) {
      where = path + ": keys " + ordered_json(golden_keys).dump() + " vs " +
              ordered_json(actual_keys).dump();
      return false;
    }
    for (const auto& key : golden_keys) {
      if (!unify(golden[key], actual[key], ids, ordered && !free_form(key),
                 where, path + "." + key)) {
        return false;
      }
    }
    return true;
  }
  if (golden != actual) {
    where = path + ": " + golden.dump() + " vs " + actual.dump();
    return false;
  }
  return true;
}

// Replaces the golden ids `frame` quotes by the actual ones.
ordered_json translate(const ordered_json& frame, const Ids& ids) {
  if (frame.is_string()) {
    auto it = ids.to_actual.find(frame.get<std::string>());
    return it == ids.to_actual.end() ? frame : ordered_json(it->second);
  }
  if (frame.is_array() || frame.is_object()) {
    ordered_json out = frame;
    for (auto it = out.begin(); it != out.end(); ++it) {
      *it = translate(*it, ids);
    }
    return out;
  }
  return frame;
}

struct Connection {
  std::unique_ptr<WsTestClient> client;
  std::deque<ordered_json> received;
  std::vector<std::string> posts_in_flight;  // request ids
};

TEST_CASE(
    "AG2's recorded wire session replays against parley serve frame "
    "for frame") {
  std::ifstream trace(std::string(PARLEY_GOLDEN_DIR) + "/ag2-wire-trace.jsonl");
  REQUIRE(trace);
  std::vector<ordered_json> lines;
  for (std::string line; std::getline(trace, line);) {
    lines.push_back(ordered_json::parse(line));
  }
  REQUIRE(lines.size() > 100);

  ServeFixture serve;
  std::map<int, Connection> connections;
  Ids ids;
  std::set<std::string> matched_responses;  // request ids
  int matched = 0;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const ordered_json& line = lines[n];
    const int conn = line["conn"];
    Connection& c = connections[conn];
    if (!c.client) c.client = serve.connect();
    INFO("trace line " << n + 1);
    if (line["dir"] == "c->h") {
      const ordered_json frame = translate(line["frame"], ids);
      if (frame.value("op", "") == "post_envelope") {
        // The previous post is answered (its response stays buffered).
        for (auto& item : connections) {
          // Not a binding: a lambda captures it, which clang 14 cannot.
          auto& o = item.second;
          for (const std::string& id : o.posts_in_flight) {
            const auto deadline = std::chrono::steady_clock::now() + 10s;
            auto answered = [&] {
              return matched_responses.contains(id) ||
                     std::ranges::any_of(o.received, [&](const auto& f) {
                       return f.value("request_id", "") == id;
                     });
            };
            while (!answered() && std::chrono::steady_clock::now() < deadline) {
              if (auto next = o.client->next(100ms)) {
                o.received.push_back(std::move(*next));
              }
            }
            REQUIRE_MESSAGE(answered(), "no answer to post " << id);
          }
          o.posts_in_flight.clear();
        }
        c.posts_in_flight.push_back(frame["request_id"]);
      }
      // Client-minted ids (request ids) are the same on both sides.
      std::function<void(const ordered_json&)> bind_new =
          [&](const ordered_json& value) {
            if (value.is_string() && is_id(value.get<std::string>()) &&
                !ids.to_actual.contains(value.get<std::string>()) &&
                !ids.to_golden.contains(value.get<std::string>())) {
              ids.to_actual[value] = value;
              ids.to_golden[value] = value;
            }
            if (value.is_structured()) {
              for (const auto& item : value) bind_new(item);
            }
          };
      bind_new(frame);
      c.client->send_text(frame.dump());
      continue;
    }
    // A hub frame: the first frame received on that connection that
    // matches it.
    const ordered_json& golden = line["frame"];
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    bool found = false;
    std::string difference;
    while (!found) {
      for (auto it = c.received.begin(); it != c.received.end(); ++it) {
        Ids trial = ids;
        std::string where;
        if ((*it)["kind"] != golden["kind"]) continue;
        if (unify(golden, *it, trial, /*ordered=*/true, where)) {
          ids = std::move(trial);
          if ((*it)["kind"] == "response") {
            matched_responses.insert((*it)["request_id"].get<std::string>());
          }
          c.received.erase(it);
          found = true;
          break;
        }
        if (difference.empty()) difference = where;
      }
      if (found) break;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      REQUIRE_MESSAGE(left.count() > 0,
                      "no frame on connection "
                          << conn << " matches " << golden.dump()
                          << "\nfirst difference: " << difference);
      if (auto next = c.client->next(std::min(left, 200ms))) {
        c.received.push_back(std::move(*next));
      }
    }
    ++matched;
  }
  // Nothing more than AG2 sent.
  for (auto& item : connections) {
    // Not bindings: a lambda captures them, which clang 14 cannot.
    auto& conn = item.first;
    auto& c = item.second;
    while (auto extra = c.client->next(200ms)) c.received.push_back(*extra);
    CHECK_MESSAGE(c.received.empty(), "connection "
                                          << conn << " got extra "
                                          << c.received.front().dump());
  }
  MESSAGE(matched << " hub frames matched");
}

}  // namespace
}  // namespace parley
