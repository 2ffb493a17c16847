// parley-bench-failover: how long clients wait when the active hub dies
// and a standby takes its PostgreSQL store over.
//
// Each trial starts from an empty store in the database --postgres names
// (dropped first): an active `parley serve` and a `parley serve --standby`
// on the same store (the standby on a port chosen beforehand, as a
// deployment configures it), alice and bob registered on the active hub
// in a conversation, alice posting for --load seconds. Then the active
// hub is stopped the trial's way:
//   failover_kill   SIGKILL: its PostgreSQL session ends with it
//   failover_pause  SIGSTOP: it keeps its session, so the standby waits
//                   for its lease (--lease-timeout) to lapse
// and from that instant a client tries, every 10 ms, to connect to the
// standby, say hello as alice and post to the same channel; the trial's
// time is when the first such post is answered ok. Per scenario: p50,
// p99 (= the worst of few trials) and the mean, one line each, then a
// JSON summary.
//
// Needs a PostgreSQL server and the parley binary (PARLEY_BINARY, or
// --parley). Failures abort with a message on stderr and exit status 1.

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/bench_support.h"
#include "log/postgres_log_store.h"
#include "log/store_location.h"

extern char** environ;

namespace parley::bench {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;
using std::chrono::milliseconds;

// One blocking WebSocket connection speaking AG2's frames.
class Connection {
 public:
  // Throws beast::system_error when the hub is not there.
  explicit Connection(std::uint16_t port) : ws_(io_) {
    tcp::resolver resolver(io_);
    net::connect(ws_.next_layer(),
                 resolver.resolve("127.0.0.1", std::to_string(port)));
    ws_.handshake("127.0.0.1", "/");
  }

  void send(const json& frame) { ws_.write(net::buffer(frame.dump())); }

  json read() {
    beast::flat_buffer buffer;
    ws_.read(buffer);
    return json::parse(beast::buffers_to_string(buffer.data()));
  }

  // Sends a request and returns its response; frames in between (notifies)
  // are dropped.
  json request(const std::string& op, const json& params) {
    const std::string id = std::to_string(next_id_++);
    send({{"request_id", id},
          {"op", op},
          {"params", params},
          {"kind", "request"}});
    while (true) {
      json frame = read();
      if (frame.value("kind", "") == "response" &&
          frame.value("request_id", "") == id) {
        return frame;
      }
    }
  }

  json call(const std::string& op, const json& params) {
    json response = request(op, params);
    if (response["ok"] != true) {
      throw BenchmarkError(op + " failed: " + response.dump());
    }
    return response["result"];
  }

  void hello(const std::string& name) {
    send({{"name", name}, {"kind", "hello"}});
    while (read().value("kind", "") != "welcome") {
    }
  }

 private:
  net::io_context io_;
  websocket::stream<tcp::socket> ws_;
  std::uint64_t next_id_ = 1;
};

json text_post(const std::string& channel, const std::string& sender,
               const std::string& text) {
  return {{"envelope",
           {{"channel_id", channel},
            {"sender_id", sender},
            {"audience", nullptr},
            {"event_type", "ag2.msg.text"},
            {"event_data", {{"text", text}}}}}};
}

// `parley serve` started by the benchmark; SIGKILLed if still running when
// it goes.
class ServeProcess {
 public:
  ServeProcess(const std::string& parley, std::vector<std::string> args) {
    int out[2];
    if (pipe(out) != 0) throw BenchmarkError("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    args.insert(args.begin(), {parley, "serve", "--ping-interval", "0"});
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, parley.c_str(), &actions, nullptr, argv.data(),
                    environ) != 0) {
      throw BenchmarkError("cannot start " + parley);
    }
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    out_ = out[0];
  }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;
  ~ServeProcess() {
    kill(pid_, SIGKILL);
    kill(pid_, SIGCONT);
    waitpid(pid_, nullptr, 0);
    close(out_);
  }

  // Reads its output until `pattern` matches; returns the first group.
  std::string wait_for(const std::string& pattern) {
    const std::regex expression(pattern);
    std::smatch match;
    char buffer[1024];
    while (!std::regex_search(output_, match, expression)) {
      const ssize_t n = read(out_, buffer, sizeof buffer);
      if (n <= 0) throw BenchmarkError("parley serve ended: " + output_);
      output_.append(buffer, static_cast<std::size_t>(n));
    }
    return match.size() > 1 ? match[1].str() : match[0].str();
  }

  void signal(int number) { kill(pid_, number); }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string output_;
};

// A loopback port nobody listens on right now.
std::uint16_t free_port() {
  net::io_context io;
  tcp::acceptor acceptor(io,
                         tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

struct Options {
  std::string postgres;
  std::string parley = PARLEY_BINARY;
  int trials = 5;
  double lease_timeout = 1.0;
  double load_seconds = 1.0;
  std::string json_path;
};

// One trial; returns the time from stopping the active hub to the
// standby's first ok, and how many posts the active hub acked before.
std::pair<Clock::duration, std::uint64_t> run_trial(const Options& options,
                                                    int stop_signal) {
  if (auto dropped = log::drop_postgres_log_store(options.postgres);
      !dropped && dropped.error().code != log::ErrorCode::kNotFound) {
    throw BenchmarkError("dropping the store: " + dropped.error().message);
  }
  char lease[32];
  std::snprintf(lease, sizeof lease, "%g", options.lease_timeout);
  ServeProcess active(options.parley,
                      {"--data", options.postgres, "--listen", "127.0.0.1:0",
                       "--lease-timeout", lease});
  const auto active_port = static_cast<std::uint16_t>(
      std::stoi(active.wait_for(R"(listening on ws://127\.0\.0\.1:(\d+))")));
  const std::uint16_t standby_port = free_port();
  ServeProcess standby(
      options.parley,
      {"--standby", "--data", options.postgres, "--listen",
       "127.0.0.1:" + std::to_string(standby_port), "--lease-timeout", lease});
  standby.wait_for("standby: following");

  std::string alice, bob, channel;
  std::uint64_t acked = 0;
  {
    Connection a(active_port);
    Connection b(active_port);
    const json no_cap = {{"limits", {{"inbox", {{"max_pending", 0}}}}}};
    auto register_agent = [&](Connection& connection, const char* name) {
      return connection
          .call("register", {{"passport", {{"name", name}}},
                             {"resume", json::object()},
                             {"rule", no_cap}})["agent_id"]
          .get<std::string>();
    };
    alice = register_agent(a, "alice");
    bob = register_agent(b, "bob");
    a.send({{"request_id", "open"},
            {"op", "create_channel"},
            {"params",
             {{"creator_id", alice},
              {"manifest_type", "conversation"},
              {"participants", {bob}}}},
            {"kind", "request"}});
    json invite;
    do {
      invite = b.read();
    } while (invite.value("kind", "") != "notify");
    const json& envelope = invite["envelope"];
    b.request("post_envelope",
              {{"envelope",
                {{"channel_id", envelope["channel_id"]},
                 {"sender_id", bob},
                 {"audience", nullptr},
                 {"event_type", "ag2.channel.invite.ack"},
                 {"event_data", {{"channel_id", envelope["channel_id"]}}},
                 {"causation_id", envelope["envelope_id"]}}}});
    json opened;
    do {
      opened = a.read();
    } while (opened.value("request_id", "") != "open");
    if (opened["ok"] != true) {
      throw BenchmarkError("create_channel failed: " + opened.dump());
    }
    channel = opened["result"]["channel_id"];
    const auto load_until =
        Clock::now() +
        milliseconds(static_cast<int>(options.load_seconds * 1000));
    while (Clock::now() < load_until) {
      a.call("post_envelope", text_post(channel, alice, chat_text(300, acked)));
      ++acked;
    }
  }

  const Clock::time_point stopped = Clock::now();
  active.signal(stop_signal);
  while (true) {
    try {
      Connection client(standby_port);
      client.hello("alice");
      json response = client.request(
          "post_envelope", text_post(channel, alice, "after the failover"));
      if (response["ok"] == true) break;
    } catch (const beast::system_error&) {
      // Not listening yet, or the connection went: try again.
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return {Clock::now() - stopped, acked};
}

Measurement run_scenario(const std::string& name, const Options& options,
                         int stop_signal) {
  std::vector<Clock::duration> times;
  std::uint64_t acked = 0;
  for (int trial = 0; trial < options.trials; ++trial) {
    auto [time, posts] = run_trial(options, stop_signal);
    times.push_back(time);
    acked += posts;
  }
  std::sort(times.begin(), times.end());
  Clock::duration total{};
  for (auto time : times) total += time;
  Measurement m{.name = name,
                .ops = static_cast<std::uint64_t>(times.size()),
                .seconds = std::chrono::duration<double>(total).count(),
                .p50_us = percentile_us(times, 0.5),
                .p99_us = percentile_us(times, 0.99)};
  char lease[32];
  std::snprintf(lease, sizeof lease, "%g", options.lease_timeout);
  m.note = std::to_string(acked) + " posts acked before the stops, lease " +
           lease + " s";
  return m;
}

void run(const Options& options) {
  std::printf("Store:      %s (dropped before each trial)\n",
              log::redact_location(options.postgres).c_str());
  std::printf("Trials:     %d per scenario; micros/op is the mean failover\n",
              options.trials);
  std::printf("Load:       %s (1-minute average)\n",
              json_number(load_average(), "%.2f").c_str());
  std::printf("------------------------------------------------\n");
  std::fflush(stdout);
  std::vector<Measurement> measurements;
  measurements.push_back(run_scenario("failover_kill", options, SIGKILL));
  print_line(measurements.back());
  measurements.push_back(run_scenario("failover_pause", options, SIGSTOP));
  print_line(measurements.back());
  emit_summary(measurements, options.json_path);
}

}  // namespace
}  // namespace parley::bench

int main(int argc, char** argv) {
  parley::bench::Options options;
  CLI::App app{"Failover time: a standby taking a PostgreSQL store over"};
  app.add_option("--postgres", options.postgres,
                 "The database (a postgresql:// URI); its Parley store is "
                 "dropped before each trial")
      ->required();
  app.add_option("--parley", options.parley, "The parley binary");
  app.add_option("--trials", options.trials, "Trials per scenario (default 5)")
      ->check(CLI::PositiveNumber);
  app.add_option("--lease-timeout", options.lease_timeout,
                 "The hubs' --lease-timeout in seconds (default 1)");
  app.add_option("--load", options.load_seconds,
                 "Seconds alice posts before each stop (default 1)");
  app.add_option("--json", options.json_path,
                 "Also write the JSON summary to this file");
  CLI11_PARSE(app, argc, argv);
  return parley::bench::run_reporting("parley-bench-failover",
                                      [&] { parley::bench::run(options); });
}
