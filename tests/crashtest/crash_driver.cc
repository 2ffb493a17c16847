#include "tests/crashtest/crash_driver.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <vector>

#include "engine/base/clock.h"
#include "engine/base/event_types.h"
#include "engine/hub/hub.h"
#include "engine/ops/control_plane.h"
#include "engine/ops/invite_reply.h"
#include "log/rocksdb_log_store.h"
#include "replay/record_json.h"
#include "tests/crashtest/ack_channel.h"
#include "tests/crashtest/record_token.h"

namespace parley::crashtest {

namespace {

using nlohmann::json;
constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
constexpr std::int64_t kEpochMicros = 1767225600LL * 1000000;  // 2026-01-01

class Driver {
 public:
  explicit Driver(const DriverOptions& options)
      : options_(options),
        random_(options.seed),
        prefix_("g" + std::to_string(options.generation) + "-") {}

  int run() {
    emit("phase hydrating");
    auto store = log::open_rocksdb_log_store(
        options_.data, {.durability = options_.durability,
                        .env = options_.env,
                        .write_buffer_size = options_.write_buffer_size});
    if (!store) {
      std::fprintf(stderr, "crash driver: %s\n", store.error().message.c_str());
      if (options_.report_failures) {
        emit("open-failed " + store.error().message);
      }
      return 1;
    }
    clock_ = std::make_shared<engine::ManualClock>(
        engine::Timestamp(std::chrono::microseconds(
            options_.clock_micros ? options_.clock_micros : kEpochMicros)));
    auto hub = engine::Hub::open(
        {.store = std::shared_ptr<log::LogStore>(std::move(store->store)),
         .clock = clock_,
         .invite_ack_timeout = std::chrono::milliseconds(0)});
    if (!hub) {
      std::fprintf(stderr, "crash driver: %s\n", hub.error().message.c_str());
      if (options_.report_failures) {
        emit("open-failed " + hub.error().message);
      }
      return 1;
    }
    hub_ = std::move(*hub);
    ops_ = std::make_unique<engine::ControlPlane>(*hub_);
    emit("phase ready");
    learn_world();
    const std::vector<Op> table = op_table();
    int total_weight = 0;
    for (const Op& op : table) total_weight += op.weight;
    for (std::int64_t n = 0; !options_.max_ops || n < options_.max_ops; ++n) {
      if (options_.stop && *options_.stop) break;
      if (n == 0) inject();
      step(table, total_weight);
      if (options_.after_op && !options_.after_op(*hub_)) break;
    }
    for (const auto& [op, counts] : counts_) {
      if (!options_.max_ops) break;
      std::fprintf(stderr, "%-18s %6d tried %6d acked\n", op.c_str(),
                   counts.first, counts.second);
    }
    if (options_.before_close) options_.before_close(hub_->store());
    (void)hub_->close();
    return 0;
  }

 private:
  struct Op {
    const char* name;
    int weight;
    std::function<bool()> run;  // true when acknowledged
  };

  void emit(std::string_view line) {
    if (options_.sink) {
      options_.sink(line);
    } else {
      send_line(line);
    }
  }

  std::string mark() { return prefix_ + std::to_string(++marks_); }
  std::string now() const { return engine::format_timestamp(clock_->now()); }
  int roll(int n) { return std::uniform_int_distribution(0, n - 1)(random_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(random_); }
  template <typename T>
  const T& pick(const std::vector<T>& from) {
    return from[static_cast<std::size_t>(roll(static_cast<int>(from.size())))];
  }

  void ack(char stream, const std::string& token) {
    emit(std::string("ack ") + stream + " " + token);
  }

  engine::Result<json> call(std::string_view op, const json& params) {
    return noted(ops_->call(op, params));
  }

  // Reports a storage failure of the running op (report_failures).
  template <typename T>
  engine::Result<T> noted(engine::Result<T> result) {
    if (!result && result.error().kind == engine::ErrorKind::kStorage &&
        options_.report_failures) {
      emit(std::string("fail ") + running_ + " " + result.error().message);
      // Self-test: the failed op acknowledged, as a hub that acked a
      // batch whose write failed would.
      if (options_.inject == "ack-failed") ack('m', "env:unwritten-" + mark());
    }
    return result;
  }

  void learn_world() {
    for (const engine::Passport& passport :
         hub_->list_agents({.limit = kAll})) {
      add_agent(*passport.agent_id);
    }
    for (const engine::ChannelMetadata& channel : hub_->list_channels(
             std::nullopt, engine::ChannelState::kActive, kAll)) {
      channels_.push_back(channel.channel_id);
    }
    for (const engine::TaskMetadata& task :
         hub_->list_tasks({.state = "running", .limit = kAll})) {
      tasks_.push_back(task.task_id);
    }
  }

  void add_agent(const std::string& agent_id) {
    agents_.push_back(agent_id);
    hub_->subscribe(
        agent_id,
        [this](const std::string& recipient,
               const std::shared_ptr<const engine::Envelope>& delivered) {
          const engine::Envelope& envelope = *delivered;
          if (envelope.event_type == engine::event_type::kChannelInvite) {
            answer_invite(recipient, envelope);
          }
        });
  }

  // Most invitees ack; some reject, some stay silent (the create then
  // times out at once).
  void answer_invite(const std::string& invitee,
                     const engine::Envelope& invite) {
    const int answer = roll(100);
    if (answer >= 95) return;
    auto reply = engine::invite_reply(
        invite, invitee,
        answer >= 90 ? std::optional<std::string_view>("not now")
                     : std::nullopt);
    if (auto id = noted(hub_->post_envelope(std::move(reply)))) {
      ack('i', "env:" + *id);
    }
  }

  // A live channel, forgetting the ones found ended.
  std::optional<engine::ChannelMetadata> live_channel() {
    while (!channels_.empty()) {
      const std::size_t at =
          static_cast<std::size_t>(roll(static_cast<int>(channels_.size())));
      auto channel = hub_->get_channel(channels_[at]);
      if (channel && channel->state == engine::ChannelState::kActive) {
        return *channel;
      }
      channels_.erase(channels_.begin() + static_cast<std::ptrdiff_t>(at));
    }
    return std::nullopt;
  }

  std::optional<std::string> live_task() {
    while (!tasks_.empty()) {
      const std::size_t at =
          static_cast<std::size_t>(roll(static_cast<int>(tasks_.size())));
      auto task = hub_->get_task(tasks_[at]);
      if (task && !task->terminal()) return task->task_id;
      tasks_.erase(tasks_.begin() + static_cast<std::ptrdiff_t>(at));
    }
    return std::nullopt;
  }

  bool register_agent() {
    const std::string name = mark();
    json capabilities = json::array();
    if (chance(0.5)) capabilities.push_back("math");
    auto result =
        call("register",
             {{"passport", {{"name", name}}},
              {"resume",
               {{"summary", name}, {"claimed_capabilities", capabilities}}}});
    if (!result) return false;
    const std::string id = (*result)["agent_id"].get<std::string>();
    ack('m', "reg:" + id);
    add_agent(id);
    return true;
  }

  bool unregister_agent() {
    if (agents_.size() < 8) return false;
    const std::size_t at =
        static_cast<std::size_t>(roll(static_cast<int>(agents_.size())));
    const std::string id = agents_[at];
    agents_.erase(agents_.begin() + static_cast<std::ptrdiff_t>(at));
    if (!call("unregister", {{"agent_id", id}})) return false;
    ack('m', "unreg:" + id);
    return true;
  }

  bool set_resume() {
    if (agents_.empty()) return false;
    const std::string& id = pick(agents_);
    const std::string m = mark();
    if (!call("set_resume",
              {{"agent_id", id},
               {"resume",
                {{"summary", m},
                 {"claimed_capabilities", json::array({"math"})}}}})) {
      return false;
    }
    ack('m', "upd:" + id + ":resume:" + m);
    return true;
  }

  bool set_skill() {
    if (agents_.empty()) return false;
    const std::string& id = pick(agents_);
    const std::string text = "skill " + mark();
    if (!call("set_skill", {{"agent_id", id}, {"skill_md", text}})) {
      return false;
    }
    ack('m', "upd:" + id + ":skill:" + text);
    return true;
  }

  bool set_rule() {
    if (agents_.empty()) return false;
    const std::string& id = pick(agents_);
    const std::string m = mark();
    if (!call("set_rule",
              {{"agent_id", id},
               {"rule", {{"access", {{"inbound_from", {"*", m}}}}}}})) {
      return false;
    }
    ack('m', "upd:" + id + ":rule:" + m);
    return true;
  }

  bool create_channel() {
    if (agents_.size() < 4) return false;
    static const char* kTypes[] = {"consulting", "conversation", "discussion",
                                   "workflow"};
    const std::string type = kTypes[roll(4)];
    std::vector<std::string> pool = agents_;
    std::shuffle(pool.begin(), pool.end(), random_);
    const int invitees = type == "conversation" ? 1 : 1 + roll(3);
    json participants = json::array();
    for (int i = 1; i <= invitees; ++i) participants.push_back(pool[i]);
    json params = {{"creator_id", pool[0]},
                   {"manifest_type", type},
                   {"participants", participants},
                   {"intent", mark()}};
    if (chance(0.4)) params["ttl"] = 5 + roll(300);
    auto result = call("create_channel", params);
    if (!result) return false;
    const std::string id = (*result)["channel_id"].get<std::string>();
    ack('m', "chan:" + id);
    channels_.push_back(id);
    return true;
  }

  bool post(bool idempotent) {
    auto channel = live_channel();
    if (!channel) return false;
    std::vector<std::string> senders;
    for (const engine::Participant& participant : channel->participants) {
      if (hub_->can_send(channel->channel_id, participant.agent_id,
                         "ag2.msg.text")) {
        senders.push_back(participant.agent_id);
      }
    }
    if (senders.empty()) return false;
    const std::string sender = pick(senders);
    const std::string text = mark();
    json envelope = {{"channel_id", channel->channel_id},
                     {"sender_id", sender},
                     {"audience", nullptr},
                     {"event_type", "ag2.msg.text"},
                     {"event_data", {{"text", text}}}};
    if (idempotent) envelope["idempotency_key"] = text;
    auto result = call("post_envelope", {{"envelope", envelope}});
    if (!result) return false;
    const std::string id = result->get<std::string>();
    ack('m', "env:" + id);
    if (!idempotent) return true;
    emit("idem " + channel->channel_id + " " + sender + " " + text + " " + id);
    if (chance(0.2)) {
      auto again = call("post_envelope", {{"envelope", envelope}});
      if (!again || again->get<std::string>() != id) {
        emit("violation idempotent retry of " + id + " answered " +
             (again ? again->get<std::string>()
                    : "error " + again.error().message));
      }
    }
    return true;
  }

  bool close_channel() {
    auto channel = live_channel();
    if (!channel) return false;
    const std::string reason = mark();
    auto result = call("close_channel", {{"channel_id", channel->channel_id},
                                         {"reason", reason}});
    if (!result || (*result)["close_reason"] != reason) return false;
    ack('m', "closed:" + channel->channel_id);
    return true;
  }

  bool observe_task() {
    if (agents_.empty()) return false;
    const std::string owner = pick(agents_);
    const std::string id = mark();
    const std::string progress = mark();
    json spec = {{"title", "crash " + id}};
    if (chance(0.5)) spec["capability"] = "math";
    json metadata = {{"task_id", id},
                     {"owner_id", owner},
                     {"spec", spec},
                     {"state", "running"},
                     {"created_at", now()},
                     {"started_at", now()},
                     {"progress", {{"last", progress}}}};
    if (chance(0.5)) {
      metadata["expires_at"] = engine::format_timestamp(
          clock_->now() + std::chrono::seconds(30 + roll(600)));
    }
    if (chance(0.5)) {
      for (const engine::ChannelMetadata& channel :
           hub_->list_channels(owner, engine::ChannelState::kActive, 1)) {
        metadata["channel_id"] = channel.channel_id;
      }
    }
    if (!call("observe_task", {{"metadata", metadata}})) return false;
    ack('m', "task:" + id + ":running:" + progress);
    tasks_.push_back(id);
    return true;
  }

  bool update_task() {
    auto task = live_task();
    if (!task) return false;
    const std::string progress = mark();
    json params = {{"task_id", *task}, {"progress", {{"last", progress}}}};
    std::string state = "running";
    if (chance(0.25)) {
      state = chance(0.5) ? "completed" : "failed";
      params["state"] = state;
    }
    if (!call("update_task", params)) return false;
    ack('m', "task:" + *task + ":" + state + ":" + progress);
    return true;
  }

  bool checkpoint_task() {
    auto task = live_task();
    if (!task) return false;
    const std::string m = mark();
    if (!call("checkpoint_task",
              {{"task_id", *task}, {"state", {{"tok", m}}}})) {
      return false;
    }
    ack('m', "ckpt:" + *task + ":" + m);
    return true;
  }

  // A terminal outcome: the hub ignores the others, writing nothing.
  bool record_observation() {
    if (agents_.empty()) return false;
    const std::string& owner = pick(agents_);
    const std::string task = mark();
    if (!call("record_observation",
              {{"owner_id", owner},
               {"capability", "math"},
               {"outcome", chance(0.8) ? "completed" : "failed"},
               {"latency_ms", 12.5},
               {"task_id", task}})) {
      return false;
    }
    ack('m', "upd:" + owner + ":observation:" + task);
    return true;
  }

  bool append_audit() {
    const json record = {{"at", now()}, {"kind", "crashtest"}, {"tok", mark()}};
    if (!call("append_audit", {{"record", record}})) return false;
    ack('m', "audit:crashtest:" + record.dump());
    return true;
  }

  bool advance_cursor() {
    auto channel = live_channel();
    if (!channel) return false;
    const std::string& agent = pick(channel->participants).agent_id;
    // The hub acks an unknown recipient's receipt and writes nothing.
    if (!hub_->get_agent(agent)) return false;
    auto last = noted(hub_->read_wal(channel->channel_id, -1));
    if (!last || last->empty()) return false;
    const std::string& id = last->back().envelope_id;
    if (hub_->inbox_cursor(agent, channel->channel_id) >= id) return false;
    if (!noted(hub_->acknowledge(agent, channel->channel_id, id))) {
      return false;
    }
    ack('m', "cursor:" + agent + ":" + channel->channel_id + ":" + id);
    return true;
  }

  // Moves the clock, runs one TTL sweep and one expectation tick, and acks
  // every record they wrote (this thread is the hub's only writer).
  bool sweep() {
    clock_->advance(std::chrono::seconds(roll(400)));
    emit("clock " + std::to_string(clock_->now().time_since_epoch().count()));
    const std::uint64_t before = hub_->store().last_sequence();
    emit("phase sweep-begin");
    auto swept = noted(hub_->expire_due());
    auto ticked = swept ? noted(hub_->tick_expectations())
                        : engine::Result<std::size_t>(0);
    emit("phase sweep-end");
    if (!swept || !ticked) return false;
    auto read = hub_->store().read(
        before + 1, log::kLastSequence,
        [&](std::uint64_t sequence, std::string_view record) {
          ack('s', record_token(sequence, record));
          return true;
        });
    return read.has_value();
  }

  void inject() {
    if (options_.inject == "lose") {
      // An ack for a post that never happened.
      ack('m', "env:ffffffffffffffffffffffffffff" + prefix_);
    } else if (options_.inject == "duplicate") {
      // A second copy of the newest resume update, appended behind the
      // hub's back.
      register_agent();
      set_resume();
      std::string copy;
      (void)hub_->store().read(
          1, log::kLastSequence, [&](std::uint64_t, std::string_view record) {
            if (replay::record_kind(record) == "ResumeSet") {
              copy = std::string(record);
            }
            return true;
          });
      std::vector<log::AppendEntry> batch{{.record = copy}};
      if (!copy.empty()) (void)hub_->store().append(batch);
    }
  }

  std::vector<Op> op_table() {
    return {
        {"register", 6, [this] { return register_agent(); }},
        {"unregister", 1, [this] { return unregister_agent(); }},
        {"set_resume", 2, [this] { return set_resume(); }},
        {"set_skill", 2, [this] { return set_skill(); }},
        {"set_rule", 2, [this] { return set_rule(); }},
        {"create_channel", 6, [this] { return create_channel(); }},
        {"post", 20, [this] { return post(false); }},
        {"post_idempotent", 12, [this] { return post(true); }},
        {"close_channel", 2, [this] { return close_channel(); }},
        {"observe_task", 3, [this] { return observe_task(); }},
        {"update_task", 3, [this] { return update_task(); }},
        {"checkpoint_task", 2, [this] { return checkpoint_task(); }},
        {"record_observation", 2, [this] { return record_observation(); }},
        {"append_audit", 1, [this] { return append_audit(); }},
        {"advance_cursor", 2, [this] { return advance_cursor(); }},
        {"sweep", 3, [this] { return sweep(); }},
    };
  }

  void step(const std::vector<Op>& table, int total_weight) {
    int at = roll(total_weight);
    for (const Op& op : table) {
      if (at < op.weight) {
        auto& [tried, acked] = counts_[op.name];
        ++tried;
        running_ = op.name;
        acked += op.run() ? 1 : 0;
        return;
      }
      at -= op.weight;
    }
  }

  const DriverOptions options_;
  std::mt19937_64 random_;
  const std::string prefix_;
  std::uint64_t marks_ = 0;
  const char* running_ = "";  // the op step() runs
  std::shared_ptr<engine::ManualClock> clock_;
  std::unique_ptr<engine::Hub> hub_;
  std::unique_ptr<engine::ControlPlane> ops_;
  std::vector<std::string> agents_;
  std::vector<std::string> channels_;
  std::vector<std::string> tasks_;
  std::map<std::string, std::pair<int, int>> counts_;
};

}  // namespace

int run_driver(const DriverOptions& options) {
  Driver driver(options);
  return driver.run();
}

}  // namespace parley::crashtest
