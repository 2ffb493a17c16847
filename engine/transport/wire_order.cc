#include "engine/transport/wire_order.h"

#include <map>
#include <string>

#include "engine/json/records_json.h"

namespace parley::transport {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// A shape: an ordered_json whose objects list keys in wire order. A key "*"
// stands for every key the shape does not name (a map's values); an array
// holds the shape of its items; anything else (null, an empty object)
// means "keep the value as it is".
ordered_json as_ordered(const json& value) {
  switch (value.type()) {
    case json::value_t::object: {
      ordered_json out = ordered_json::object();
      for (const auto& [key, item] : value.items()) out[key] = as_ordered(item);
      return out;
    }
    case json::value_t::array: {
      ordered_json out = ordered_json::array();
      for (const auto& item : value) out.push_back(as_ordered(item));
      return out;
    }
    case json::value_t::string:
      return value.get_ref<const std::string&>();
    case json::value_t::boolean:
      return value.get<bool>();
    case json::value_t::number_integer:
      return value.get<std::int64_t>();
    case json::value_t::number_unsigned:
      return value.get<std::uint64_t>();
    case json::value_t::number_float:
      return value.get<double>();
    default:
      return nullptr;
  }
}

ordered_json reorder(const json& value, const ordered_json& shape) {
  if (value.is_object() && shape.is_object() && !shape.empty()) {
    ordered_json out = ordered_json::object();
    for (const auto& [key, sub] : shape.items()) {
      if (key == "*") continue;
      if (auto it = value.find(key); it != value.end()) {
        out[key] = reorder(*it, sub);
      }
    }
    const auto wildcard = shape.find("*");
    for (const auto& [key, item] : value.items()) {
      if (shape.contains(key)) continue;
      out[key] =
          wildcard != shape.end() ? reorder(item, *wildcard) : as_ordered(item);
    }
    return out;
  }
  if (value.is_array() && shape.is_array() && !shape.empty()) {
    ordered_json out = ordered_json::array();
    for (const auto& item : value) out.push_back(reorder(item, shape[0]));
    return out;
  }
  return as_ordered(value);
}

// Shapes of AG2's records, taken from the engine's own ordered writers on
// records with every optional part present.
struct Shapes {
  ordered_json passport, resume, rule, metadata, envelope, task, pending_turn;

  Shapes() {
    passport = engine::to_ordered_json(engine::Passport{});
    passport["cost"] = ordered_json::object();
    for (const char* key :
         {"input_per_mtok", "output_per_mtok", "latency_tier"}) {
      passport["cost"][key] = nullptr;
    }

    engine::Resume r;
    r.examples.push_back({});
    r.observed["capability"] = {};
    resume = engine::to_ordered_json(r);
    ordered_json stats = resume["observed"]["capability"];
    resume["observed"] = ordered_json::object();
    resume["observed"]["*"] = std::move(stats);

    rule = engine::to_ordered_json(engine::Rule{});

    engine::ChannelMetadata m;
    m.participants.push_back({});
    m.manifest.expectations.push_back({.applies_to = "[]"});
    metadata = engine::to_ordered_json(m);

    envelope = engine::to_ordered_json(engine::Envelope{});

    // AG2's TaskMetadata.
    task = ordered_json::object();
    for (const char* key :
         {"task_id", "owner_id", "spec", "state", "created_at", "started_at",
          "completed_at", "expires_at", "last_progress_at", "progress",
          "result", "error", "channel_id"}) {
      task[key] = nullptr;
    }
    task["spec"] = ordered_json::object();
    for (const char* key : {"title", "description", "payload", "capability"}) {
      task["spec"][key] = nullptr;
    }

    pending_turn = ordered_json::object();
    for (const char* key :
         {"channel_id", "triggering_envelope_id", "expected_at"}) {
      pending_turn[key] = nullptr;
    }
  }
};

const Shapes& shapes() {
  static const Shapes instance;
  return instance;
}

ordered_json list_of(const ordered_json& shape) {
  return ordered_json::array({shape});
}

// The shape of `op`'s result, or null when it has no record in it.
const ordered_json& shape_of(std::string_view op) {
  static const std::map<std::string, ordered_json, std::less<>> table = [] {
    const Shapes& s = shapes();
    ordered_json channel_log_item = ordered_json::object();
    channel_log_item["sequence"] = nullptr;
    channel_log_item["envelope"] = s.envelope;
    return std::map<std::string, ordered_json, std::less<>>{
        {"register", s.passport},
        {"get_agent", s.passport},
        {"list_agents", list_of(s.passport)},
        {"get_resume", s.resume},
        {"get_rule", s.rule},
        {"create_channel", s.metadata},
        {"get_channel", s.metadata},
        {"close_channel", s.metadata},
        {"list_channels", list_of(s.metadata)},
        {"read_wal", list_of(s.envelope)},
        {"find_envelope_by_causation", s.envelope},
        {"pending_turns_for", list_of(s.pending_turn)},
        {"get_task", s.task},
        {"list_tasks", list_of(s.task)},
        {"read_channel_log", list_of(channel_log_item)},
    };
  }();
  static const ordered_json none;
  auto it = table.find(op);
  return it == table.end() ? none : it->second;
}

}  // namespace

ordered_json wire_result(std::string_view op, const json& result) {
  return reorder(result, shape_of(op));
}

}  // namespace parley::transport
