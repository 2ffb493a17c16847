#include "tools/script_runner.h"

#include <cmath>

#include "engine/base/event_types.h"
#include "engine/base/json_input.h"
#include "engine/json/python_json.h"
#include "engine/json/records_json.h"
#include "engine/ops/invite_reply.h"

namespace parley::engine {

namespace {

using nlohmann::json;

constexpr std::string_view kScriptEpoch = "2026-01-01T00:00:00+00:00";

json error_line(const Error& error) {
  return {{"ok", false},
          {"error_code", wire_code(error.kind)},
          {"error_message", error.message}};
}

// The id a successful op binds with "as": the agent id of `register`, the
// channel id of `create_channel`, the envelope id of `post_envelope`.
std::optional<std::string> bound_id(std::string_view op, const json& result) {
  const char* key = op == "register"         ? "agent_id"
                    : op == "create_channel" ? "channel_id"
                                             : nullptr;
  const json* id = &result;
  if (key) {
    auto it = result.is_object() ? result.find(key) : result.end();
    if (it == result.end()) return std::nullopt;
    id = &*it;
  }
  if (!id->is_string()) return std::nullopt;
  return id->get<std::string>();
}

}  // namespace

ScriptRunner::ScriptRunner(StoreOpener open_store)
    : open_store_(std::move(open_store)),
      clock_(std::make_shared<ManualClock>(*parse_timestamp(kScriptEpoch))) {}

ScriptRunner::~ScriptRunner() = default;

Result<std::unique_ptr<ScriptRunner>> ScriptRunner::start(
    StoreOpener open_store) {
  std::unique_ptr<ScriptRunner> runner(new ScriptRunner(std::move(open_store)));
  if (auto opened = runner->open_hub(); !opened) {
    return std::unexpected(opened.error());
  }
  return runner;
}

Result<void> ScriptRunner::open_hub() {
  control_plane_.reset();
  hub_.reset();
  auto store = open_store_();
  if (!store) return std::unexpected(store.error());
  // Invitees answer synchronously while create_channel delivers the
  // invites, so there is nothing to wait for.
  auto hub = Hub::open({.store = std::move(*store),
                        .clock = clock_,
                        .invite_ack_timeout = std::chrono::milliseconds(0)});
  if (!hub) return std::unexpected(hub.error());
  hub_ = std::move(*hub);
  control_plane_ = std::make_unique<ControlPlane>(*hub_);
  for (const Passport& passport :
       hub_->list_agents({.limit = std::numeric_limits<std::size_t>::max()})) {
    bind_agent(*passport.agent_id);
  }
  return {};
}

void ScriptRunner::bind_agent(const std::string& agent_id) {
  hub_->subscribe(agent_id,
                  [this](const std::string& recipient,
                         const std::shared_ptr<const Envelope>& delivered) {
                    const Envelope& envelope = *delivered;
                    if (envelope.event_type == event_type::kChannelInvite) {
                      answer_invite(recipient, envelope);
                    }
                  });
}

// As AG2's HumanClient: ack every invite unless told otherwise.
void ScriptRunner::answer_invite(const std::string& invitee,
                                 const Envelope& invite) {
  auto mode = invite_modes_.find(invitee);
  const InviteMode answer =
      mode == invite_modes_.end() ? InviteMode::kAck : mode->second;
  if (answer == InviteMode::kSilent) return;
  auto reply =
      invite_reply(invite, invitee,
                   answer == InviteMode::kReject
                       ? std::optional<std::string_view>("not interested")
                       : std::nullopt);
  (void)hub_->post_envelope(std::move(reply));  // refusals change nothing
}

void ScriptRunner::substitute(json& value) const {
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text.starts_with('$')) {
      if (auto it = bindings_.find(std::string_view(text).substr(1));
          it != bindings_.end()) {
        value = it->second;
      }
    }
    return;
  }
  // In place, each element once: the line's nesting is bounded at parse.
  if (value.is_array() || value.is_object()) {
    for (auto& element : value) substitute(element);
  }
}

Result<json> ScriptRunner::run_script_op(std::string_view op,
                                         const json& params) {
  if (op == "invitee") {
    if (!params.contains("agent_id") || !params["agent_id"].is_string()) {
      return invalid("'agent_id'");
    }
    const json mode_value = params.contains("mode") ? params["mode"] : "ack";
    if (!mode_value.is_string()) {
      return invalid("invitee param 'mode' must be a string");
    }
    const std::string mode = mode_value.get<std::string>();
    InviteMode parsed;
    if (mode == "ack") {
      parsed = InviteMode::kAck;
    } else if (mode == "reject") {
      parsed = InviteMode::kReject;
    } else if (mode == "silent") {
      parsed = InviteMode::kSilent;
    } else {
      return invalid("invitee mode must be ack, reject or silent, got '" +
                     mode + "'");
    }
    invite_modes_[params["agent_id"].get<std::string>()] = parsed;
    return json(nullptr);
  }
  if (op == "clock.set") {
    auto at = params.contains("at") && params["at"].is_string()
                  ? parse_timestamp(params["at"].get<std::string>())
                  : std::nullopt;
    if (!at || !is_representable(*at)) {
      return invalid("clock.set needs an ISO-8601 'at' in years 1-9999");
    }
    clock_->set(*at);
    return json(nullptr);
  }
  if (op == "clock.advance") {
    if (!params.contains("seconds") || !params["seconds"].is_number()) {
      return invalid("clock.advance needs numeric 'seconds'");
    }
    const double seconds = params["seconds"].get<double>();
    // Within a century either way, and the clock stays within years
    // 1-9999, the years a timestamp can name.
    constexpr double kMaxStep = 100.0 * 365.25 * 86400;
    if (!(std::abs(seconds) <= kMaxStep)) {
      return invalid("clock.advance 'seconds' must be within ±" +
                     std::to_string(static_cast<std::int64_t>(kMaxStep)));
    }
    const Timestamp to =
        clock_->now() +
        std::chrono::microseconds(static_cast<std::int64_t>(seconds * 1e6));
    if (!is_representable(to)) {
      return invalid("clock.advance would move the clock past year 1-9999");
    }
    clock_->set(to);
    return json(nullptr);
  }
  if (op == "sweep") {
    if (auto swept = hub_->expire_due(); !swept) {
      return std::unexpected(swept.error());
    }
    if (auto ticked = hub_->tick_expectations(); !ticked) {
      return std::unexpected(ticked.error());
    }
    return json(nullptr);
  }
  if (op == "restart") {
    if (auto reopened = open_hub(); !reopened) {
      return std::unexpected(reopened.error());
    }
    return json(nullptr);
  }
  // "state"
  if (!params.contains("channel_id") || !params["channel_id"].is_string()) {
    return invalid("'channel_id'");
  }
  const std::string channel_id = params["channel_id"].get<std::string>();
  auto metadata = hub_->get_channel(channel_id);
  if (!metadata) return std::unexpected(metadata.error());
  auto state = hub_->adapter_state(channel_id);
  if (!state) return std::unexpected(state.error());
  return json{{"metadata", to_json(*metadata)},
              {"adapter_state", *state ? json::parse(**state) : json(nullptr)}};
}

Result<json> ScriptRunner::run(std::string_view op, const json& params) {
  static constexpr std::string_view kScriptOps[] = {
      "invitee", "clock.set", "clock.advance", "sweep", "restart", "state"};
  if (op != "restart" && !hub_) {
    // A restart whose open failed left no hub: only another restart helps.
    return std::unexpected(
        Error{ErrorKind::kStorage,
              "no hub is open: the last restart failed to open the store"});
  }
  if (std::ranges::find(kScriptOps, op) != std::end(kScriptOps)) {
    return run_script_op(op, params);
  }
  auto result = control_plane_->call(op, params);
  if (result && op == "register" && result->contains("agent_id")) {
    bind_agent((*result)["agent_id"].get<std::string>());
  }
  return result;
}

std::optional<std::string> ScriptRunner::run_line(std::string_view line) {
  const auto first = line.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || line[first] == '#') {
    return std::nullopt;
  }
  auto parsed = parse_json_input(line, "script line");
  json output;
  if (!parsed) {
    output = error_line(parsed.error());
  } else if (!parsed->is_object()) {
    output = error_line(
        {ErrorKind::kInvalid, "a script line must be one JSON object"});
  } else if (!parsed->contains("op") || !(*parsed)["op"].is_string()) {
    output = error_line({ErrorKind::kInvalid, "'op'"});
  } else if (parsed->contains("params") && !(*parsed)["params"].is_object()) {
    output = error_line(
        {ErrorKind::kInvalid, "a script line's 'params' must be an object"});
  } else {
    json& request = *parsed;
    const std::string op = request["op"].get<std::string>();
    json params = request.contains("params") ? std::move(request["params"])
                                             : json::object();
    substitute(params);
    auto result = run(op, params);
    if (!result) {
      output = error_line(result.error());
    } else {
      if (request.contains("as") && request["as"].is_string()) {
        if (auto id = bound_id(op, *result)) {
          bindings_[request["as"].get<std::string>()] = *id;
        }
      }
      output = {{"ok", true}, {"result", std::move(*result)}};
    }
  }
  return dump_python(output);
}

}  // namespace parley::engine
