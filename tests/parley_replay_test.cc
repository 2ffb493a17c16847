// The read-only inspection commands of the parley binary, run as a user
// runs them on stores built by `parley exec` scripts: output, exit codes,
// --follow beside a live hub, and the view scenarios (area 8) through
// `parley view`.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "engine/base/flex_json.h"
#include "engine/hub/hub.h"
#include "log/rocksdb_log_store.h"
#include "tests/test_support.h"

namespace parley {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using Run = testing::CommandRun;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Run parley(const std::string& arguments) {
  return testing::run_command(std::string(PARLEY_BINARY) + " " + arguments);
}

std::vector<json> json_lines(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(json::parse(line));
  }
  return lines;
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// A store built by running `script` (JSON lines) through `parley exec`.
class Store {
 public:
  explicit Store(const std::string& script) {
    const fs::path file = scratch_.path() / "script.jsonl";
    std::ofstream(file) << script;
    Run run = parley("exec --data " + data() + " " + file.string());
    REQUIRE(run.exit_code == 0);
    exec_output = json_lines(run.out);
  }
  static Store tour() {
    return Store(read_file(PARLEY_SOURCE_DIR "/tools/examples/tour.jsonl"));
  }

  std::string data() const { return (scratch_.path() / "hub").string(); }
  // Runs `command` with `--data <this store>` after its command words.
  Run run(const std::string& command, const std::string& rest = "") const {
    return parley(command + " --data " + data() + " " + rest);
  }
  // The id of the first channel of `type`.
  std::string channel(std::string_view type) const {
    for (const json& line : json_lines(
             run("channels", "-o jsonl --type " + std::string(type)).out)) {
      return line["channel_id"];
    }
    FAIL("no channel of type " << type);
    return {};
  }
  std::string agent_id(std::string_view name) const {
    for (const json& line : json_lines(run("agents", "-o jsonl").out)) {
      if (line["name"] == name) return line["agent_id"];
    }
    FAIL("no agent " << name);
    return {};
  }

  std::vector<json> exec_output;

 private:
  testing::ScratchDir scratch_;
};

std::string register_line(std::string_view name) {
  return R"({"op": "register", "params": {"passport": {"name": ")" +
         std::string(name) + R"("}, "resume": {}}, "as": ")" +
         std::string(name) + "\"}\n";
}

std::string open_line(std::string_view type, std::string_view creator,
                      std::vector<std::string> participants) {
  std::string list;
  for (const auto& participant : participants) {
    list += (list.empty() ? "\"$" : ", \"$") + participant + "\"";
  }
  return R"({"op": "create_channel", "params": {"creator_id": "$)" +
         std::string(creator) + R"(", "manifest_type": ")" + std::string(type) +
         R"(", "participants": [)" + list + R"(]}, "as": "c"})" + "\n";
}

std::string say_line(std::string_view sender, std::string_view text,
                     std::optional<std::string> to = std::nullopt) {
  return R"({"op": "post_envelope", "params": {"envelope": {"channel_id": "$c", "sender_id": "$)" +
         std::string(sender) + R"(", "audience": )" +
         (to ? "[\"$" + *to + "\"]" : std::string("null")) +
         R"(, "event_type": "ag2.msg.text", "event_data": {"text": ")" +
         std::string(text) + R"("}}}})" + "\n";
}

// --- channels, agents, stats ---------------------------------------------

TEST_CASE("channels lists type, state, participant names and envelope count") {
  Store store = Store::tour();
  Run run = store.run("channels", "-o jsonl");
  CHECK(run.exit_code == 0);
  std::vector<json> channels = json_lines(run.out);
  REQUIRE(channels.size() == 4);
  CHECK(channels[0]["type"] == "consulting");
  CHECK(channels[0]["state"] == "closed");
  CHECK(channels[0]["close_reason"] == "consulting_complete");
  CHECK(channels[0]["closed_at"] == "2026-01-01T00:00:00+00:00");
  CHECK(channels[0]["participants"][0]["name"] == "alice");
  CHECK(channels[0]["participants"][1]["name"] == "bob");
  CHECK(channels[0]["envelopes"] == 6);
  CHECK(channels[1]["type"] == "conversation");
  CHECK(channels[1]["state"] == "active");
  CHECK(channels[1]["closed_at"].is_null());
  CHECK(channels[3]["type"] == "workflow");
  CHECK(channels[3]["close_reason"] == "approved");
}

TEST_CASE("channels filters by state, type and agent") {
  Store store = Store::tour();
  CHECK(
      json_lines(store.run("channels", "-o jsonl --state closed").out).size() ==
      2);
  CHECK(json_lines(store.run("channels", "-o jsonl --state pending").out)
            .empty());
  auto discussion =
      json_lines(store.run("channels", "-o jsonl --type discussion").out);
  REQUIRE(discussion.size() == 1);
  CHECK(discussion[0]["type"] == "discussion");
  CHECK(
      json_lines(store.run("channels", "-o jsonl --agent carol").out).size() ==
      3);
  CHECK(json_lines(
            store.run("channels", "-o jsonl --agent " + store.agent_id("bob"))
                .out)
            .size() == 3);
  CHECK(
      json_lines(store.run("channels", "-o jsonl --agent nobody").out).empty());
  CHECK(store.run("channels", "--state sleeping").exit_code == 64);
}

TEST_CASE("channels -o text is a table with participant names") {
  Store store = Store::tour();
  Run run = store.run("channels", "-o text");
  CHECK(run.exit_code == 0);
  CHECK(run.out.starts_with("CHANNEL"));
  CHECK(contains(run.out, "alice, bob, carol"));
  CHECK(contains(run.out, "consulting_complete"));
}

TEST_CASE("channels -o json prints one array") {
  Store store = Store::tour();
  Run run = store.run("channels", "-o json");
  CHECK(run.exit_code == 0);
  json all = json::parse(run.out);
  REQUIRE(all.is_array());
  CHECK(all.size() == 4);
}

TEST_CASE("agents lists names, ids, kinds and capabilities") {
  Store store = Store::tour();
  Run run = store.run("agents", "-o jsonl");
  CHECK(run.exit_code == 0);
  std::vector<json> agents = json_lines(run.out);
  REQUIRE(agents.size() == 3);
  CHECK(agents[0]["name"] == "alice");
  CHECK(agents[0]["kind"] == "agent");
  CHECK(agents[0]["capabilities"] == json::array({"planning"}));
  CHECK(agents[1]["name"] == "bob");
  CHECK(agents[1]["agent_id"].get<std::string>().size() == 32);
  auto math = json_lines(store.run("agents", "-o jsonl --capability math").out);
  REQUIRE(math.size() == 1);
  CHECK(math[0]["name"] == "bob");
  Run text = store.run("agents", "-o text");
  CHECK(contains(text.out, "NAME"));
  CHECK(contains(text.out, store.agent_id("carol")));
}

TEST_CASE("stats counts records per kind, channels per state and type") {
  Store store = Store::tour();
  Run run = store.run("stats", "-o jsonl");
  CHECK(run.exit_code == 0);
  std::vector<json> lines = json_lines(run.out);
  REQUIRE(lines.size() == 1);
  const json& stats = lines[0];
  CHECK(stats["records"]["AgentRegistered"] == 3);
  CHECK(stats["records"]["ChannelCreated"] == 4);
  CHECK(stats["records"]["Envelope"] == 27);
  CHECK(stats["channels_by_state"] == json{{"active", 2}, {"closed", 2}});
  CHECK(stats["channels_by_type"]["workflow"] == 1);
  CHECK(stats["agents"] == 3);
  CHECK(stats["bytes_on_disk"].get<std::uint64_t>() > 0);
  REQUIRE(stats["largest_channels"].size() == 4);
  CHECK(stats["largest_channels"][0]["type"] == "workflow");
  CHECK(stats["largest_channels"][0]["envelopes"] == 9);
  auto top = json_lines(store.run("stats", "-o jsonl --top 1").out);
  CHECK(top[0]["largest_channels"].size() == 1);
  Run text = store.run("stats", "-o text");
  CHECK(contains(text.out, "RECORD KIND"));
  CHECK(contains(text.out, "alice, bob, carol"));
}

// --- log show and log dump ------------------------------------------------

TEST_CASE("log show prints a channel's envelopes as JSON lines with sequence") {
  Store store = Store::tour();
  const std::string chat = store.channel("conversation");
  Run run = store.run("log show", chat + " -o jsonl");
  CHECK(run.exit_code == 0);
  std::vector<json> envelopes = json_lines(run.out);
  REQUIRE(envelopes.size() == 5);
  for (std::size_t i = 0; i < envelopes.size(); ++i) {
    CHECK(envelopes[i]["sequence"] == i + 1);
    CHECK(envelopes[i]["channel_id"] == chat);
  }
  CHECK(envelopes[0]["event_type"] == "ag2.channel.invite");
  CHECK(envelopes[0]["hub_authored"] == true);
  CHECK(envelopes[3]["event_data"]["text"] == "ready when you are");
  CHECK(envelopes[3]["sender_name"] == "carol");
  CHECK(envelopes[3]["hub_authored"] == false);
  CHECK(envelopes[4]["sender_name"] == "alice");
  CHECK(envelopes[3]["log_sequence"] < envelopes[4]["log_sequence"]);
}

TEST_CASE("log show selects --from, --to and --tail") {
  Store store = Store::tour();
  const std::string chat = store.channel("conversation");
  auto sequences = [&](const std::string& range) {
    std::vector<int> out;
    for (const json& line :
         json_lines(store.run("log show", chat + " -o jsonl " + range).out)) {
      out.push_back(line["sequence"]);
    }
    return out;
  };
  CHECK(sequences("--from 2 --to 3") == std::vector<int>{2, 3});
  CHECK(sequences("--tail 2") == std::vector<int>{4, 5});
  CHECK(sequences("--to 3 --tail 1") == std::vector<int>{3});
  CHECK(sequences("--tail 50") == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(sequences("--from 6").empty());
}

TEST_CASE("log show -o text is a table with names as text") {
  Store store = Store::tour();
  Run run = store.run("log show", store.channel("conversation") + " -o text");
  CHECK(run.exit_code == 0);
  CHECK(run.out.starts_with("SEQ"));
  CHECK(contains(run.out, "carol"));
  CHECK(contains(run.out, "ready when you are"));
  CHECK(contains(run.out, "ag2.channel.opened"));
  CHECK_FALSE(contains(run.out, store.agent_id("carol")));
}

TEST_CASE("log show on a missing channel or store exits 66") {
  Store store = Store::tour();
  Run channel = store.run("log show", "no-such-channel");
  CHECK(channel.exit_code == 66);
  CHECK(contains(channel.err, "channel not found: no-such-channel"));
  CHECK(channel.out.empty());
  testing::ScratchDir dir;
  Run missing =
      parley("log show --data " + (dir.path() / "none").string() + " c1");
  CHECK(missing.exit_code == 66);
  CHECK(contains(missing.err, "no Parley store"));
  CHECK_FALSE(fs::exists(dir.path() / "none"));
}

TEST_CASE("bad usage of the inspection commands exits 64") {
  Store store = Store::tour();
  CHECK(store.run("log show").exit_code == 64);  // no channel
  CHECK(parley("channels").exit_code == 64);     // no --data
  CHECK(store.run("channels", "-o yaml").exit_code == 64);
  CHECK(store.run("log show", "x --tail many").exit_code == 64);
  CHECK(store.run("replay").exit_code == 64);
  CHECK(store.run("view", store.channel("consulting")).exit_code == 64);
  CHECK(store.run("log show", store.channel("consulting") + " -f -o json")
            .exit_code == 64);
}

TEST_CASE("every inspection command has --help with an example") {
  for (const char* command : {"channels", "agents", "log show", "log dump",
                              "replay", "view", "stats"}) {
    CAPTURE(command);
    Run run = parley(std::string(command) + " --help");
    CHECK(run.exit_code == 0);
    CHECK(contains(run.out, std::string("Example: parley ") + command));
  }
}

TEST_CASE("log dump prints every record in log-sequence order, all kinds") {
  Store store = Store::tour();
  Run run = store.run("log dump", "-o jsonl");
  CHECK(run.exit_code == 0);
  std::vector<json> records = json_lines(run.out);
  REQUIRE(records.size() == 43);
  std::set<std::string> kinds;
  for (std::size_t i = 0; i < records.size(); ++i) {
    CHECK(records[i]["log_sequence"] == i + 1);
    kinds.insert(records[i]["kind"].get<std::string>());
  }
  CHECK(kinds == std::set<std::string>{"AgentRegistered", "AuditRecorded",
                                       "ChannelCreated", "Envelope"});
  CHECK(records[0]["kind"] == "AgentRegistered");
  CHECK(records[0]["passport"]["name"] == "alice");
  auto range =
      json_lines(store.run("log dump", "-o jsonl --from 5 --to 6").out);
  REQUIRE(range.size() == 2);
  CHECK(range[0]["log_sequence"] == 5);
  Run text = store.run("log dump", "-o text");
  CHECK(contains(text.out, "ChannelCreated"));
}

TEST_CASE("log dump on a missing store exits 66") {
  testing::ScratchDir dir;
  CHECK(parley("log dump --data " + dir.path().string()).exit_code == 66);
}

// --- replay -----------------------------------------------------------------

TEST_CASE("replay prints lifecycle, adapter state and a stable state hash") {
  Store store = Store::tour();
  const std::string flow = store.channel("workflow");
  Run run = store.run("replay", flow + " -o jsonl");
  CHECK(run.exit_code == 0);
  std::vector<json> lines = json_lines(run.out);
  REQUIRE(lines.size() == 1);
  const json& state = lines[0];
  CHECK(state["record"] == "state");
  CHECK(state["sequence"] == 9);
  CHECK(state["metadata"]["state"] == "closed");
  CHECK(state["metadata"]["close_reason"] == "approved");
  CHECK(state["adapter_state"]["turn_count"] == 3);
  CHECK(state["adapter_state"]["context_vars"] ==
        json{{"approved", true}, {"draft", 1}});
  CHECK(state["state_hash"].get<std::string>().size() == 16);
  CHECK(store.run("replay", flow + " -o jsonl").out == run.out);
  Run text = store.run("replay", flow + " -o text");
  CHECK(contains(text.out, "state         closed"));
  CHECK(contains(text.out, "close reason  approved"));
  CHECK(
      contains(text.out, "alice (" + store.agent_id("alice") + ") initiator"));
  CHECK(contains(text.out,
                 "state hash    " + state["state_hash"].get<std::string>()));
}

TEST_CASE("replay --at re-folds up to a sequence, --step shows each state") {
  Store store = Store::tour();
  const std::string flow = store.channel("workflow");
  auto pending = json_lines(store.run("replay", flow + " -o jsonl --at 4").out);
  REQUIRE(pending.size() == 1);
  CHECK(pending[0]["sequence"] == 4);
  CHECK(pending[0]["last_sequence"] == 9);
  CHECK(pending[0]["metadata"]["state"] == "pending");
  CHECK(pending[0]["metadata"]["pending_acks"].empty());
  auto steps = json_lines(store.run("replay", flow + " -o jsonl --step").out);
  REQUIRE(steps.size() == 10);
  for (int i = 0; i < 9; ++i) {
    CHECK(steps[i]["record"] == "step");
    CHECK(steps[i]["sequence"] == i + 1);
  }
  CHECK(steps[4]["event_type"] == "ag2.channel.opened");
  CHECK(steps[4]["state"] == "active");
  CHECK(steps[5]["sender_name"] == "alice");
  CHECK(steps[5]["adapter_state"]["context_vars"] == json{{"draft", 1}});
  CHECK(steps[3]["state_hash"] == pending[0]["state_hash"]);
  CHECK(steps[8]["state_hash"] == steps[9]["state_hash"]);
  CHECK(steps[9]["record"] == "state");
  auto created = json_lines(store.run("replay", flow + " -o jsonl --at 0").out);
  CHECK(created[0]["metadata"]["state"] == "pending");
  CHECK(created[0]["metadata"]["pending_acks"].size() == 2);
}

TEST_CASE("replay's state hash is the same after the hub restarts") {
  Store store = Store::tour();
  const std::string chat = store.channel("conversation");
  const std::string before = store.run("replay", chat + " -o jsonl").out;
  testing::ScratchDir scratch;
  std::ofstream(scratch.path() / "restart.jsonl") << "{\"op\": \"restart\"}\n";
  REQUIRE(parley("exec --data " + store.data() + " " +
                 (scratch.path() / "restart.jsonl").string())
              .exit_code == 0);
  CHECK(store.run("replay", chat + " -o jsonl").out == before);
}

TEST_CASE("replay of a missing channel exits 66") {
  Store store = Store::tour();
  Run run = store.run("replay", "nope");
  CHECK(run.exit_code == 66);
  CHECK(contains(run.err, "channel not found: nope"));
}

// --- beside a live hub ------------------------------------------------------

TEST_CASE("inspection commands read a store a live process holds locked") {
  Store store = Store::tour();
  auto held = log::open_rocksdb_log_store(store.data());
  REQUIRE(held.has_value());
  CHECK(parley("log info --data " + store.data()).exit_code == 69);
  Run channels = store.run("channels", "-o jsonl");
  CHECK(channels.exit_code == 0);
  CHECK(json_lines(channels.out).size() == 4);
  CHECK(store.run("log dump", "-o jsonl").exit_code == 0);
  CHECK(store.run("stats", "-o jsonl").exit_code == 0);
}

// A `parley` child whose stdout the test reads as it is written.
class Child {
 public:
  explicit Child(const std::vector<std::string>& arguments) {
    int pipe_fds[2];
    REQUIRE(pipe(pipe_fds) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      dup2(pipe_fds[1], STDOUT_FILENO);
      close(pipe_fds[0]);
      close(pipe_fds[1]);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(PARLEY_BINARY));
      for (const auto& argument : arguments) {
        argv.push_back(const_cast<char*>(argument.c_str()));
      }
      argv.push_back(nullptr);
      execv(PARLEY_BINARY, argv.data());
      _exit(127);
    }
    close(pipe_fds[1]);
    out_ = pipe_fds[0];
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }

  // Reads until `done(output)` holds or `timeout` passes; the output so far.
  std::string read_until(const std::function<bool(const std::string&)>& done,
                         std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done(output_) && std::chrono::steady_clock::now() < deadline) {
      pollfd fd{.fd = out_, .events = POLLIN};
      if (poll(&fd, 1, 100) <= 0) continue;
      char buffer[4096];
      ssize_t n = read(out_, buffer, sizeof buffer);
      if (n <= 0) break;
      output_.append(buffer, static_cast<std::size_t>(n));
    }
    return output_;
  }

  // Sends SIGINT and returns the exit code.
  int interrupt() {
    kill(pid_, SIGINT);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string output_;
};

TEST_CASE("log show --follow prints what a live hub appends until Ctrl-C") {
  Store store(register_line("alice") + register_line("bob") +
              open_line("conversation", "alice", {"bob"}) +
              say_line("alice", "before"));
  const std::string chat = store.channel("conversation");
  const std::string alice = store.agent_id("alice");
  const std::string bob = store.agent_id("bob");
  auto opened = log::open_rocksdb_log_store(store.data());
  REQUIRE(opened.has_value());
  auto hub = engine::Hub::open(
      {.store = std::shared_ptr<log::LogStore>(std::move(opened->store))});
  REQUIRE_MESSAGE(hub.has_value(), testing::error_message(hub));

  Child follower(
      {"log", "show", "--data", store.data(), chat, "-f", "-o", "jsonl"});
  auto lines_with = [](std::string_view text) {
    return [text](const std::string& output) { return contains(output, text); };
  };
  std::string output =
      follower.read_until(lines_with("before"), std::chrono::seconds(10));
  REQUIRE(contains(output, "\"before\""));
  for (int i = 1; i <= 3; ++i) {
    engine::Envelope envelope{
        .channel_id = chat,
        .sender_id = i % 2 ? bob : alice,
        .event_type = "ag2.msg.text",
        .event_data = *engine::to_flex({{"text", "live " + std::to_string(i)}}),
    };
    auto posted = (*hub)->post_envelope(std::move(envelope));
    REQUIRE_MESSAGE(posted.has_value(), testing::error_message(posted));
  }
  output = follower.read_until(lines_with("live 3"), std::chrono::seconds(10));
  CHECK(follower.interrupt() == 0);
  std::vector<json> lines = json_lines(output);
  REQUIRE(lines.size() == 7);  // invite, ack, opened, before, 3 live
  for (std::size_t i = 0; i < lines.size(); ++i) {
    CHECK(lines[i]["sequence"] == i + 1);
  }
  CHECK(lines[4]["event_data"]["text"] == "live 1");
  CHECK(lines[4]["sender_name"] == "bob");
  CHECK(lines[6]["event_data"]["text"] == "live 3");
}

// --- views (VIEW-*) ----------------------------------------------------------

std::vector<std::pair<std::string, std::string>> items(const Run& run) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const json& line : json_lines(run.out)) {
    out.emplace_back(line["kind"], line["text"]);
  }
  return out;
}
using Items = std::vector<std::pair<std::string, std::string>>;

TEST_CASE("VIEW-02 parley view: WindowedSummary passes short history through") {
  Store store(register_line("alice") + register_line("bob") +
              open_line("conversation", "alice", {"bob"}) +
              say_line("alice", "hi") + say_line("bob", "hello") +
              say_line("alice", "how's it going"));
  Run run = store.run("view", store.channel("conversation") +
                                  " --as bob --policy windowed:10 -o jsonl");
  CHECK(run.exit_code == 0);
  CHECK(items(run) == Items{{"user", "hi"},
                            {"assistant", "hello"},
                            {"user", "how's it going"}});
}

TEST_CASE("VIEW-03 parley view: WindowedSummary compacts older history") {
  std::string script = register_line("alice") + register_line("bob") +
                       open_line("conversation", "alice", {"bob"});
  for (int i = 0; i < 8; ++i) {
    script += say_line("alice", "msg " + std::to_string(i));
  }
  Store store(script);
  Run run = store.run("view", store.channel("conversation") +
                                  " --as bob --policy windowed:3 -o jsonl");
  CHECK(run.exit_code == 0);
  std::vector<json> lines = json_lines(run.out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0]["kind"] == "summary");
  CHECK(lines[0]["event_count"] == 5);
  CHECK(lines[0]["text"] == "Earlier in this channel: 5 messages from " +
                                store.agent_id("alice") + ".");
  CHECK(items(run) == Items{{"summary", lines[0]["text"]},
                            {"user", "msg 5"},
                            {"user", "msg 6"},
                            {"user", "msg 7"}});
}

TEST_CASE("VIEW-04 parley view: summary wording, singular and sorted names") {
  Store store(register_line("carol") + register_line("alice") +
              register_line("bob") +
              open_line("discussion", "carol", {"alice", "bob"}) +
              say_line("carol", "one") + say_line("alice", "two") +
              say_line("bob", "three") + say_line("carol", "four"));
  const std::string talk = store.channel("discussion");
  Run single =
      store.run("view", talk + " --as alice --policy windowed:3 -o jsonl");
  REQUIRE(json_lines(single.out).size() == 4);
  CHECK(json_lines(single.out)[0]["text"] ==
        "Earlier in this channel: 1 message from " + store.agent_id("carol") +
            ".");
  Run named = store.run(
      "view", talk + " --as alice --policy named-windowed:1 -o jsonl");
  std::vector<json> lines = json_lines(named.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["text"] ==
        "Earlier in this channel: 3 messages from alice, bob, carol.");
  CHECK(lines[1]["text"] == "[carol]: four");
}

TEST_CASE(
    "VIEW-05 parley view: envelopes not addressed to the viewer are "
    "absent") {
  Store store(register_line("alice") + register_line("bob") +
              register_line("carol") + register_line("dave") +
              open_line("discussion", "alice", {"bob", "carol", "dave"}) +
              say_line("alice", "broadcast") +
              say_line("bob", "private to carol", "carol") +
              say_line("carol", "carol's reply"));
  const std::string talk = store.channel("discussion");
  CHECK(items(store.run("view", talk + " --as dave --policy full -o jsonl")) ==
        Items{{"user", "broadcast"}, {"user", "carol's reply"}});
  CHECK(items(store.run("view", talk + " --as carol --policy full -o jsonl")) ==
        Items{{"user", "broadcast"},
              {"user", "private to carol"},
              {"assistant", "carol's reply"}});
}

TEST_CASE("VIEW-06 parley view: a window size below 1 is a usage error") {
  Store store = Store::tour();
  const std::string chat = store.channel("conversation");
  for (const char* policy : {"windowed:0", "named-windowed:-1"}) {
    CAPTURE(policy);
    Run run = store.run("view", chat + " --as alice --policy " + policy);
    CHECK(run.exit_code == 64);
    CHECK(contains(run.err, "recent_n must be >= 1"));
    CHECK(run.out.empty());
  }
  CHECK(store.run("view", chat + " --as alice --policy sideways").exit_code ==
        64);
}

TEST_CASE("VIEW-09 parley view: the default view follows the channel type") {
  Store store = Store::tour();
  auto policy_of = [&](std::string_view type) {
    Run run = store.run("view", store.channel(type) + " --as alice -o jsonl");
    CHECK(run.exit_code == 0);
    return run.err;
  };
  CHECK(contains(policy_of("consulting"), "view policy full_transcript\n"));
  CHECK(contains(policy_of("conversation"),
                 "view policy windowed_summary (recent_n 10)"));
  CHECK(contains(policy_of("discussion"),
                 "view policy named_windowed_summary (recent_n 6)"));
  CHECK(contains(policy_of("workflow"),
                 "view policy named_windowed_summary (recent_n 6)"));
  Run text =
      store.run("view", store.channel("discussion") + " --as bob -o text");
  CHECK(contains(text.out, "named_windowed_summary (recent_n 6)"));
  CHECK(contains(text.out, "[alice]: topic: the plan"));
}

TEST_CASE(
    "VIEW-11 parley view: the same log gives the same view, restart "
    "included") {
  Store store = Store::tour();
  const std::string talk = store.channel("discussion");
  const Run first = store.run("view", talk + " --as carol -o jsonl");
  CHECK(first.exit_code == 0);
  CHECK_FALSE(first.out.empty());
  CHECK(store.run("view", talk + " --as carol -o jsonl").out == first.out);
  testing::ScratchDir scratch;
  std::ofstream(scratch.path() / "restart.jsonl") << "{\"op\": \"restart\"}\n";
  REQUIRE(parley("exec --data " + store.data() + " " +
                 (scratch.path() / "restart.jsonl").string())
              .exit_code == 0);
  CHECK(
      store.run("view", talk + " --as " + store.agent_id("carol") + " -o jsonl")
          .out == first.out);
}

TEST_CASE("view of an unknown agent exits 66, of a non-participant 65") {
  Store store = Store::tour();
  const std::string ask = store.channel("consulting");
  Run unknown = store.run("view", ask + " --as zed");
  CHECK(unknown.exit_code == 66);
  CHECK(contains(unknown.err, "agent not found: zed"));
  Run outsider = store.run("view", ask + " --as carol");
  CHECK(outsider.exit_code == 65);
  CHECK(contains(outsider.err, "is not a participant"));
  CHECK(store.run("view", "nope --as alice").exit_code == 66);
}

}  // namespace
}  // namespace parley
