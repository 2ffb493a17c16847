#include "tests/fuzz/op_hub.h"

#include <algorithm>

#include "engine/base/event_types.h"
#include "engine/base/json_input.h"
#include "engine/json/records_json.h"
#include "engine/ops/invite_reply.h"
#include "engine/transport/frame_codec.h"
#include "engine/transport/wire_order.h"
#include "log/memory_log_store.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/hub_check.h"

namespace parley::fuzz {
namespace {

using nlohmann::json;

// What the prelude registers, opens and posts; "as" binds "$name".
constexpr std::string_view kPrelude[] = {
    R"({"op": "register", "params": {"passport": {"name": "a0"}, "resume": {"claimed_capabilities": ["debate", "law"], "summary": "a0 agent"}}, "as": "a0"})",
    R"({"op": "register", "params": {"passport": {"name": "a1"}, "resume": {"claimed_capabilities": ["law", "code"], "summary": "a1 agent"}}, "as": "a1"})",
    R"({"op": "register", "params": {"passport": {"name": "a2"}, "resume": {"claimed_capabilities": ["math"], "summary": "a2 agent"}, "rule": {"limits": {"max_concurrent_tasks": 2}}}, "as": "a2"})",
    R"({"op": "register", "params": {"passport": {"name": "a3"}, "resume": {}}, "as": "a3"})",
    R"({"op": "register", "params": {"passport": {"name": "a4", "kind": "human"}, "resume": {}, "skill_md": "---\nname: a4\ndescription: a person\n---\nbody\n"}, "as": "a4"})",
    R"({"op": "register", "params": {"passport": {"name": "alice"}, "resume": {"claimed_capabilities": ["planning"]}}, "as": "alice"})",
    R"({"op": "register", "params": {"passport": {"name": "bob"}, "resume": {"claimed_capabilities": ["math"]}}, "as": "bob"})",
    R"({"op": "register", "params": {"passport": {"name": "carol"}, "resume": {"claimed_capabilities": ["review"]}}, "as": "carol"})",
    R"({"op": "create_channel", "params": {"creator_id": "$a3", "manifest_type": "consulting", "participants": ["$a1"]}, "as": "c1"})",
    R"({"op": "create_channel", "params": {"creator_id": "$a0", "manifest_type": "conversation", "participants": ["$a2"], "ttl": "1h"}, "as": "c2"})",
    R"({"op": "create_channel", "params": {"creator_id": "$a1", "manifest_type": "discussion", "participants": ["$a2", "$a3"]}, "as": "c3"})",
    R"({"op": "create_channel", "params": {"creator_id": "$a0", "manifest_type": "discussion", "participants": ["$a1", "$a4"]}, "as": "c4"})",
    R"({"op": "create_channel", "params": {"creator_id": "$alice", "manifest_type": "consulting", "participants": ["$bob"]}, "as": "ask"})",
    R"({"op": "create_channel", "params": {"creator_id": "$alice", "manifest_type": "conversation", "participants": ["$carol"], "ttl": "1h"}, "as": "chat"})",
    R"({"op": "create_channel", "params": {"creator_id": "$alice", "manifest_type": "discussion", "participants": ["$bob", "$carol"]}, "as": "talk"})",
    R"({"op": "create_channel", "params": {"creator_id": "$alice", "manifest_type": "workflow", "participants": ["$bob", "$carol"], "knobs": {"graph": {"initial_speaker": "$alice", "transitions": [{"when": {"name": "context_equals", "args": {"key": "approved", "value": true}}, "then": {"name": "terminate", "args": {"reason": "approved"}}, "priority": 0}, {"when": {"name": "always", "args": {}}, "then": {"name": "round_robin", "args": {}}, "priority": 1}], "default_target": null, "max_turns": 10}}}, "as": "flow"})",
    R"({"op": "post_envelope", "params": {"envelope": {"channel_id": "$c1", "sender_id": "$a3", "audience": null, "event_type": "ag2.msg.text", "event_data": {"text": "t325"}}}, "as": "e1"})",
    R"({"op": "observe_task", "params": {"metadata": {"task_id": "task-report", "owner_id": "$bob", "spec": {"title": "write the report", "capability": "analysis"}, "state": "running", "created_at": "2026-01-01T00:00:00+00:00", "channel_id": "$ask"}}})",
};

// The agents bound to a fuzzed connection.
class FixedCaller final : public engine::Caller {
 public:
  explicit FixedCaller(std::vector<std::string> agents)
      : agents_(std::move(agents)) {
    std::ranges::sort(agents_);
  }
  bool holds(std::string_view agent_id) const override {
    return std::ranges::binary_search(agents_, agent_id);
  }
  std::vector<std::string> bound_agents() const override { return agents_; }

 private:
  std::vector<std::string> agents_;
};

}  // namespace

OpHub::OpHub() { open(); }

OpHub::~OpHub() {
  check_against_fold();
  (void)hub_->close();
}

void OpHub::open() {
  ops_.reset();
  if (hub_) (void)hub_->close();
  hub_.reset();
  bindings_.clear();
  clock_ = std::make_shared<engine::ManualClock>(
      *engine::parse_timestamp("2026-01-01T00:00:00+00:00"));
  store_ = log::make_memory_log_store();
  auto hub =
      engine::Hub::open({.store = store_,
                         .clock = clock_,
                         .invite_ack_timeout = std::chrono::milliseconds(0)});
  FUZZ_CHECK(hub.has_value(),
             "a hub on a memory store does not open: " + hub.error().message);
  hub_ = std::move(*hub);
  ops_ = std::make_unique<engine::ControlPlane>(*hub_);
  for (std::string_view line : kPrelude) run_prelude_line(std::string(line));
}

json OpHub::run_prelude_line(const std::string& line) {
  json request = json::parse(line);
  json params = request["params"];
  substitute(params);
  const std::string op = request["op"];
  auto result = ops_->call(op, params);
  FUZZ_CHECK(result.has_value(),
             "prelude line failed: " + line + ": " + result.error().message);
  if (!request.contains("as")) return *result;
  const std::string name = request["as"];
  const json& id = op == "register"         ? (*result)["agent_id"]
                   : op == "create_channel" ? (*result)["channel_id"]
                                            : *result;
  bindings_[name] = id.get<std::string>();
  if (op == "register") {
    const std::string agent = id.get<std::string>();
    // Every agent acks its invites at once, on the delivering thread (a
    // blocking call delivers on the caller's thread).
    hub_->subscribe(
        agent,
        [this](const std::string& recipient,
               const std::shared_ptr<const engine::Envelope>& delivered) {
          const engine::Envelope& envelope = *delivered;
          if (envelope.event_type == engine::event_type::kChannelInvite) {
            (void)hub_->post_envelope(
                engine::invite_reply(envelope, recipient));
          }
        });
  }
  return *result;
}

void OpHub::substitute(json& value) const {
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text.starts_with('$')) {
      auto it = bindings_.find(std::string_view(text).substr(1));
      if (it != bindings_.end()) value = it->second;
    }
    return;
  }
  if (value.is_array() || value.is_object()) {
    for (auto& element : value) substitute(element);
  }
}

std::string OpHub::request(std::string_view line) {
  if (store_->last_sequence() > kResetAfterRecords) {
    check_against_fold();
    open();
  }
  auto parsed = engine::parse_json_input(line, "request");
  if (!parsed || !parsed->is_object() || !parsed->contains("op") ||
      !(*parsed)["op"].is_string()) {
    return transport::encode_failure("r", "protocol_error", "not a request");
  }
  json& request = *parsed;
  const std::string op = request["op"].get<std::string>();
  json params = json::object();
  if (auto it = request.find("params"); it != request.end()) {
    if (!it->is_object()) {
      return transport::encode_failure("r", "protocol_error", "bad params");
    }
    params = std::move(*it);
  }
  substitute(params);
  std::optional<FixedCaller> caller;
  if (auto it = request.find("caller"); it != request.end() && it->is_array()) {
    std::vector<std::string> agents;
    for (json agent : *it) {
      substitute(agent);
      if (agent.is_string()) agents.push_back(agent.get<std::string>());
    }
    caller.emplace(std::move(agents));
  }

  const std::uint64_t before = store_->last_sequence();
  auto result = ops_->call(op, params, caller ? &*caller : nullptr);
  std::string frame;
  if (result) {
    const nlohmann::ordered_json wire = transport::wire_result(op, *result);
    FUZZ_CHECK(json(wire) == *result,
               "wire_result changed the value of " + op + "'s result");
    frame = transport::encode_response("r", wire);
  } else {
    const engine::Error& error = result.error();
    FUZZ_CHECK(error.kind != engine::ErrorKind::kStorage,
               "the log refused what the op layer accepted: " + error.message);
    FUZZ_CHECK(!error.message.empty(), op + " failed without a message");
    if (error.kind == engine::ErrorKind::kInvalid ||
        error.kind == engine::ErrorKind::kAccessDenied) {
      FUZZ_CHECK(store_->last_sequence() == before,
                 op + " was refused (" + error.message + ") but wrote " +
                     std::to_string(store_->last_sequence() - before) +
                     " records");
    }
    frame = transport::encode_failure("r", engine::wire_code(error.kind),
                                      error.message);
  }
  FUZZ_CHECK(frame.find('\n') == std::string::npos,
             "the response spans lines: " + frame);
  const json response = json::parse(frame, nullptr, false);
  FUZZ_CHECK(response.is_object() && response["kind"] == "response" &&
                 response["ok"] == result.has_value(),
             "the response is not one JSON response frame: " + frame);
  return frame;
}

void OpHub::check_against_fold() const {
  check_hub_against_log(*hub_, *store_);
}

}  // namespace parley::fuzz
