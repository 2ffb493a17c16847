// `parley serve` as users run it: the printed URL, the effective
// configuration and --check-config, SIGTERM drains and exits 0, a second
// signal exits at once, kill -9 loses nothing that was acked.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "tests/serve_fixture.h"

namespace parley {
namespace {

using nlohmann::json;
using testing::ServeProcess;
using testing::WsTestClient;
using namespace std::chrono_literals;

testing::CommandRun parley(const std::string& arguments) {
  return testing::run_command(std::string(PARLEY_BINARY) + " " + arguments +
                              " 2>&1");
}

// Waits until the server refuses new requests because it drains.
bool draining(WsTestClient& client) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto answer = client.request("find_agent_id", {{"name", "x"}});
    if (answer["error_message"] == "the hub is shutting down") return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

TEST_CASE(
    "serve prints its effective configuration and URL, serves, and "
    "exits 0 on SIGTERM after a clean drain") {
  testing::ScratchDir dir;
  std::string alice;
  {
    ServeProcess serve(dir.path() / "data");
    CHECK(serve.url() == "ws://127.0.0.1:" + std::to_string(serve.port()));
    CHECK(serve.output().find("listen = 127.0.0.1:0") != std::string::npos);
    WsTestClient client("127.0.0.1", serve.port());
    alice = client.register_agent("alice");
    CHECK(serve.stop(SIGTERM) == 0);
    CHECK(serve.output().find("stopped cleanly") != std::string::npos);
    CHECK(client.wait_closed(5s));
    CHECK(client.close_code() == 1001);
  }
  // What it acked is in the store.
  auto agents = parley("agents --data " + (dir.path() / "data").string());
  CHECK(agents.exit_code == 0);
  CHECK(agents.out.find(alice) != std::string::npos);
}

TEST_CASE("a SIGTERM drain answers the requests in flight before closing") {
  testing::ScratchDir dir;
  ServeProcess serve(dir.path() / "data", {"--drain-timeout", "1"});
  WsTestClient client("127.0.0.1", serve.port());
  const std::string alice = client.register_agent("alice");
  WsTestClient silent("127.0.0.1", serve.port());
  const std::string bob = silent.register_agent("bob");
  const std::string create =
      client.send_request("create_channel", {{"creator_id", alice},
                                             {"manifest_type", "conversation"},
                                             {"participants", {bob}}});
  REQUIRE(silent.next_of_kind("notify").has_value());  // bob never acks
  kill(serve.pid(), SIGTERM);
  CHECK(draining(silent));  // new requests are refused
  auto answered = client.await_response(create, 10s);
  CHECK(answered["ok"] == false);
  CHECK(answered["error_message"] == "the hub is closed");
  CHECK(client.wait_closed(5s));
  CHECK(client.close_code() == 1001);
  CHECK(serve.stop(0) == 0);  // no second signal: it ends by itself
}

TEST_CASE(
    "a drain still takes an invitee's ack, so the create_channel waiting "
    "for it opens the channel and the drain ends") {
  testing::ScratchDir dir;
  ServeProcess serve(dir.path() / "data", {"--drain-timeout", "60"});
  WsTestClient client("127.0.0.1", serve.port());
  const std::string alice = client.register_agent("alice");
  WsTestClient invitee("127.0.0.1", serve.port());
  const std::string bob = invitee.register_agent("bob");
  const std::string create =
      client.send_request("create_channel", {{"creator_id", alice},
                                             {"manifest_type", "conversation"},
                                             {"participants", {bob}}});
  auto invite = invitee.next_of_kind("notify");
  REQUIRE(invite.has_value());
  const auto started = std::chrono::steady_clock::now();
  kill(serve.pid(), SIGTERM);
  CHECK(draining(invitee));  // other requests are refused
  testing::ack_invite(invitee, *invite);
  auto answered = client.await_response(create, 10s);
  CHECK_MESSAGE(answered["ok"] == true, answered.dump());
  CHECK(answered["result"]["state"] == "active");
  CHECK(serve.stop(0) == 0);  // no second signal: it ends by itself
  CHECK(std::chrono::steady_clock::now() - started < 30s);
}

TEST_CASE("a second signal during the drain exits at once") {
  testing::ScratchDir dir;
  ServeProcess serve(dir.path() / "data", {"--drain-timeout", "60"});
  WsTestClient client("127.0.0.1", serve.port());
  const std::string alice = client.register_agent("alice");
  WsTestClient silent("127.0.0.1", serve.port());
  const std::string bob = silent.register_agent("bob");
  client.send_request("create_channel", {{"creator_id", alice},
                                         {"manifest_type", "conversation"},
                                         {"participants", {bob}}});
  REQUIRE(silent.next_of_kind("notify").has_value());
  kill(serve.pid(), SIGTERM);
  REQUIRE(draining(silent));
  const auto started = std::chrono::steady_clock::now();
  CHECK(serve.stop(SIGINT, 10s) == 128 + SIGINT);
  CHECK(std::chrono::steady_clock::now() - started < 5s);
  CHECK(serve.output().find("second signal") != std::string::npos);
}

TEST_CASE(
    "--check-config prints the effective configuration and exits 0, "
    "or names the problem and exits 64, api keys are never printed") {
  testing::ScratchDir dir;
  const auto config = dir.path() / "parley.toml";
  std::ofstream(config) << "data = \"" << (dir.path() / "data").string()
                        << "\"\nlisten = \"127.0.0.1:9\"\n"
                           "[auth]\nschemes = [\"api_key\"]\n"
                           "[auth.api_keys]\nalice = \"very-secret-key\"\n"
                           "[limits]\nmax_frame_bytes = 65536\n"
                           "max_connections = 300\n"
                           "max_request_bytes_in_flight = 1048576\n"
                           "[log]\nmemtable_bytes = 4194304\n";
  auto ok = parley("serve --check-config --config " + config.string());
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("listen = 127.0.0.1:9") != std::string::npos);
  CHECK(ok.out.find("limits.max_frame_bytes = 65536") != std::string::npos);
  CHECK(ok.out.find("log.memtable_bytes = 4194304") != std::string::npos);
  CHECK(ok.out.find("limits.max_connections = 300\n") != std::string::npos);
  CHECK(ok.out.find("limits.max_requests_in_flight = 1024\n") !=
        std::string::npos);
  CHECK(ok.out.find("limits.max_request_bytes_in_flight = 1048576\n") !=
        std::string::npos);
  CHECK(ok.out.find("limits.max_total_request_bytes_in_flight = 268435456\n") !=
        std::string::npos);
  CHECK(ok.out.find("limits.total_send_queue_bytes = 1073741824\n") !=
        std::string::npos);
  CHECK(ok.out.find("auth.api_keys = alice (keys not shown)") !=
        std::string::npos);
  CHECK(ok.out.find("very-secret-key") == std::string::npos);
  // Flags override the file.
  auto flagged = parley("serve --check-config --config " + config.string() +
                        " --listen 127.0.0.1:7");
  CHECK(flagged.out.find("listen = 127.0.0.1:7") != std::string::npos);
  auto memtable = parley("serve --check-config --config " + config.string() +
                         " --memtable-bytes 1048576");
  CHECK(memtable.out.find("log.memtable_bytes = 1048576") != std::string::npos);
  auto budget = parley("serve --check-config --config " + config.string() +
                       " --max-total-request-bytes-in-flight 5000000");
  CHECK(
      budget.out.find("limits.max_total_request_bytes_in_flight = 5000000\n") !=
      std::string::npos);
  CHECK(parley("serve --check-config --config " + config.string() +
               " --max-request-bytes-in-flight 0")
            .exit_code == 64);
  auto queues = parley("serve --check-config --config " + config.string() +
                       " --total-send-queue-bytes 7000000");
  CHECK(queues.out.find("limits.total_send_queue_bytes = 7000000\n") !=
        std::string::npos);
  auto connections = parley("serve --check-config --config " + config.string() +
                            " --max-connections 5");
  CHECK(connections.out.find("limits.max_connections = 5\n") !=
        std::string::npos);
  CHECK(connections.out.find("warning") == std::string::npos);
  auto too_many = parley("serve --check-config --config " + config.string() +
                         " --max-connections 1000000000000");
  CHECK(too_many.exit_code == 0);
  CHECK(too_many.out.find("warning: max_connections (1000000000000) is above "
                          "half the open-file limit") != std::string::npos);
  // Unset: half the open-file limit, raised first to the hard limit.
  rlimit files{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &files) == 0);
  auto automatic =
      parley("serve --check-config --data " + (dir.path() / "d").string());
  CHECK(automatic.out.find(
            "limits.max_connections = " + std::to_string(files.rlim_max / 2) +
            " (automatic: half the open-file limit, " +
            std::to_string(files.rlim_max) + ")") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "data"));

  auto open = parley("serve --check-config --data " +
                     (dir.path() / "d").string() + " --listen 0.0.0.0:80");
  CHECK(open.exit_code == 64);
  CHECK(open.out.find("refusing auth scheme 'none' on non-loopback address "
                      "0.0.0.0") != std::string::npos);
  CHECK(parley("serve --check-config --data d --listen 0.0.0.0:80 "
               "--allow-unauthenticated")
            .exit_code == 0);
  auto clear = parley("serve --check-config --config " + config.string() +
                      " --listen 0.0.0.0:80");
  CHECK(clear.exit_code == 64);
  CHECK(clear.out.find("refusing auth scheme 'api_key' without TLS") !=
        std::string::npos);
  auto no_keys = parley("serve --check-config --data d --auth api_key");
  CHECK(no_keys.exit_code == 64);
  CHECK(no_keys.out.find("auth scheme api_key needs keys") !=
        std::string::npos);
  std::ofstream(dir.path() / "bad.toml") << "[limits]\nmax_frames = 3\n";
  auto unknown = parley("serve --check-config --data d --config " +
                        (dir.path() / "bad.toml").string());
  CHECK(unknown.exit_code == 64);
  CHECK(unknown.out.find("unknown key 'limits.max_frames'") !=
        std::string::npos);
  auto bad_listen = parley("serve --check-config --data d --listen nope");
  CHECK(bad_listen.exit_code == 64);
  CHECK(bad_listen.out.find("expected HOST:PORT") != std::string::npos);
}

TEST_CASE(
    "--check-config loads the TLS certificate and key as the server would: "
    "a file that is no certificate, or a key of another certificate, exits "
    "64 naming it") {
  testing::ScratchDir dir;
  auto make_pair = [&](const std::string& name) {
    auto made = testing::run_command(
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
        "-keyout " +
        (dir.path() / (name + ".key")).string() + " -out " +
        (dir.path() / (name + ".pem")).string() + " 2>&1");
    REQUIRE_MESSAGE(made.exit_code == 0, made.out);
  };
  make_pair("a");
  make_pair("b");
  std::ofstream(dir.path() / "garbage.pem") << "not a certificate\n";
  auto check = [&](const std::string& cert, const std::string& key) {
    return parley("serve --check-config --data d --tls-cert " +
                  (dir.path() / cert).string() + " --tls-key " +
                  (dir.path() / key).string());
  };
  CHECK(check("a.pem", "a.key").exit_code == 0);
  auto garbage = check("garbage.pem", "a.key");
  CHECK(garbage.exit_code == 64);
  CHECK(garbage.out.find("cannot use TLS certificate " +
                         (dir.path() / "garbage.pem").string()) !=
        std::string::npos);
  auto mismatched = check("a.pem", "b.key");
  CHECK(mismatched.exit_code == 64);
  CHECK(mismatched.out.find("cannot use TLS private key " +
                            (dir.path() / "b.key").string() +
                            ": key values mismatch") != std::string::npos);
  auto missing = check("absent.pem", "a.key");
  CHECK(missing.exit_code == 64);
  CHECK(missing.out.find("cannot use TLS certificate " +
                         (dir.path() / "absent.pem").string() +
                         ": no such file") != std::string::npos);
  auto directory = check("a.pem", ".");
  CHECK(directory.exit_code == 64);
  CHECK(directory.out.find(": not a regular file") != std::string::npos);
}

TEST_CASE(
    "a configuration file that is a directory or cannot be read exits 64 "
    "naming it, and nothing is left at its default silently") {
  testing::ScratchDir dir;
  auto directory =
      parley("serve --check-config --data d --config " + dir.path().string());
  CHECK(directory.exit_code == 64);
  CHECK(directory.out.find(dir.path().string() +
                           ": a directory, not a configuration file") !=
        std::string::npos);
  const auto absent = dir.path() / "absent.toml";
  auto missing =
      parley("serve --check-config --data d --config " + absent.string());
  CHECK(missing.exit_code == 64);
  CHECK(missing.out.find(absent.string() + ": ") != std::string::npos);
  CHECK(missing.out.find("line 0") == std::string::npos);
}

TEST_CASE(
    "a flag out of range exits 64 naming it, as the config file's value "
    "would: negative counts, seconds that are negative, NaN, infinite or "
    "absurd, thousands of I/O threads") {
  auto check = [](const std::string& flag) {
    return parley("serve --check-config --data d " + flag);
  };
  for (const char* flag :
       {"--io-threads -1", "--memtable-bytes -1", "--send-queue-frames -5"}) {
    CAPTURE(flag);
    auto run = check(flag);
    CHECK(run.exit_code == 64);
    CHECK(run.out.find("expected a whole number, 0 or more") !=
          std::string::npos);
  }
  for (const char* flag :
       {"--ping-interval -1", "--drain-timeout nan", "--ttl-sweep-interval inf",
        "--lease-timeout 1e300"}) {
    CAPTURE(flag);
    auto run = check(flag);
    CHECK(run.exit_code == 64);
    CHECK(
        run.out.find(std::string(flag).substr(0, std::string(flag).find(' ')) +
                     " must be a number of seconds from 0 to 1e9") !=
        std::string::npos);
  }
  auto threads = check("--io-threads 5000");
  CHECK(threads.exit_code == 64);
  CHECK(threads.out.find(
            "threads.io (--io-threads) must be from 1 to 1024, got 5000") !=
        std::string::npos);
  CHECK(check("--ttl-sweep-interval 0 --io-threads 4").exit_code == 0);
  testing::ScratchDir dir;
  std::ofstream(dir.path() / "threads.toml") << "[threads]\nio = 5000\n";
  auto file = check("--config " + (dir.path() / "threads.toml").string());
  CHECK(file.exit_code == 64);
  CHECK(file.out.find("threads.io (--io-threads) must be from 1 to 1024") !=
        std::string::npos);
}

TEST_CASE("a port already in use is a clear error") {
  testing::ScratchDir dir;
  ServeProcess first(dir.path() / "one");
  auto second = parley("serve --data " + (dir.path() / "two").string() +
                       " --listen 127.0.0.1:" + std::to_string(first.port()));
  CHECK(second.exit_code == 69);
  CHECK(second.out.find("cannot listen on 127.0.0.1:" +
                        std::to_string(first.port())) != std::string::npos);
}

TEST_SUITE("slow") {
  TEST_CASE(
      "kill -9 while clients post: after a restart every post answered "
      "ok is in the log exactly once, and parley audit is clean") {
    testing::ScratchDir dir;
    const auto data = dir.path() / "data";
    std::string channel;
    std::map<std::string, std::string> acked;  // envelope id -> text
    std::mutex acked_mutex;
    {
      ServeProcess serve(data);
      WsTestClient a("127.0.0.1", serve.port());
      WsTestClient b("127.0.0.1", serve.port());
      const std::string alice = a.register_agent(
          "alice", nullptr, {{"limits", {{"inbox", {{"max_pending", 0}}}}}});
      const std::string bob = b.register_agent(
          "bob", nullptr, {{"limits", {{"inbox", {{"max_pending", 0}}}}}});
      channel = testing::open_channel(a, alice, b, bob, "conversation");
      std::atomic<bool> stop = false;
      std::vector<std::thread> posters;
      for (int t = 0; t < 4; ++t) {
        posters.emplace_back([&, t] {
          WsTestClient client("127.0.0.1", serve.port());
          client.send({{"name", t % 2 ? "bob" : "alice"}, {"kind", "hello"}});
          (void)client.next_of_kind("welcome");
          const std::string sender = t % 2 ? bob : alice;
          for (int i = 0; !stop; ++i) {
            const std::string text =
                "t" + std::to_string(t) + "-" + std::to_string(i);
            json response;
            try {
              response = client.request(
                  "post_envelope",
                  testing::text_envelope(channel, sender, text), 5s);
            } catch (const std::exception&) {
              return;  // the server is gone
            }
            if (response["ok"] == true) {
              std::lock_guard lock(acked_mutex);
              acked[response["result"].get<std::string>()] = text;
            }
          }
        });
      }
      // Killed once enough posts are acked, not after a fixed time: a
      // loaded CI machine acks a handful in a second and a half.
      const auto deadline = std::chrono::steady_clock::now() + 60s;
      while (std::chrono::steady_clock::now() < deadline) {
        {
          std::lock_guard lock(acked_mutex);
          if (acked.size() >= 200) break;
        }
        std::this_thread::sleep_for(10ms);
      }
      kill(serve.pid(), SIGKILL);
      stop = true;
      for (auto& poster : posters) poster.join();
      CHECK(serve.stop(SIGKILL) == 128 + SIGKILL);
    }
    MESSAGE(acked.size() << " posts acked before kill -9");
    REQUIRE(acked.size() > 10);
    {
      ServeProcess again(data);
      WsTestClient client("127.0.0.1", again.port());
      client.send({{"name", "alice"}, {"kind", "hello"}});
      REQUIRE(client.next_of_kind("welcome").has_value());
      std::map<std::string, int> seen;
      for (const auto& envelope :
           client.call("read_wal", {{"channel_id", channel}})) {
        if (envelope["event_type"] != "ag2.msg.text") continue;
        const std::string id = envelope["envelope_id"];
        ++seen[id];
        if (auto it = acked.find(id); it != acked.end()) {
          CHECK(envelope["event_data"]["text"] == it->second);
        }
      }
      for (const auto& item : acked) {
        // Not bindings: a lambda captures them, which clang 14 cannot.
        const auto& id = item.first;
        const auto& text = item.second;
        CHECK_MESSAGE(seen[id] == 1, "acked post " << text);
      }
      CHECK(again.stop(SIGTERM) == 0);
    }
    auto audit = parley("audit --data " + data.string());
    CHECK_MESSAGE(audit.exit_code == 0, audit.out);
  }
}

}  // namespace
}  // namespace parley
