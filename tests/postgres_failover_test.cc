// Hot standby on PostgreSQL with real processes: `parley serve --standby`
// follows the store the active `parley serve` writes and takes it over
// when that hub is killed (its session ends) or paused (its lease lapses);
// clients that move to it lose nothing acked, and the hub it replaced can
// never write again. Needs the `postgres` fixture's server.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tests/own_postgres_server.h"
#include "tests/postgres_test_support.h"
#include "tests/serve_fixture.h"

namespace parley {
namespace {

using nlohmann::json;
using testing::ServeProcess;
using testing::WsTestClient;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

TEST_SUITE_BEGIN("postgres");

const std::vector<std::string> kLease = {"--lease-timeout", "1"};

std::vector<std::string> standby_arguments() {
  std::vector<std::string> arguments = kLease;
  arguments.push_back("--standby");
  return arguments;
}

testing::CommandRun parley(const std::string& arguments) {
  return testing::run_command(std::string(PARLEY_BINARY) + " " + arguments +
                              " 2>&1");
}

json hello(const std::string& name, json since = nullptr) {
  json frame = {{"name", name}, {"kind", "hello"}};
  if (!since.is_null()) frame["since_envelope_id"] = std::move(since);
  return frame;
}

// Sends SIGSTOP to `pid` and waits until every thread of it has stopped
// (state T in /proc): kill() only queues the signal, and a thread already
// running goes on until the kernel gets to it.
void pause_process(pid_t pid) {
  REQUIRE(kill(pid, SIGSTOP) == 0);
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  auto all_stopped = [&] {
    for (const auto& task : std::filesystem::directory_iterator(tasks)) {
      std::ifstream stat(task.path() / "stat");
      std::string line;
      std::getline(stat, line);
      // "pid (comm) S ...": the state follows the last ')'.
      const auto close = line.rfind(')');
      if (close == std::string::npos || close + 2 >= line.size() ||
          line[close + 2] != 'T') {
        return false;
      }
    }
    return true;
  };
  const auto deadline = SteadyClock::now() + 10s;
  while (!all_stopped()) {
    REQUIRE(SteadyClock::now() < deadline);
    std::this_thread::sleep_for(1ms);
  }
}

// A text post from `sender` whose idempotency key is its text.
json keyed_post(const std::string& channel, const std::string& sender,
                const std::string& text) {
  json params = testing::text_envelope(channel, sender, text);
  params["envelope"]["idempotency_key"] = text;
  return params;
}

// Posts as `sender` until told to stop or the hub goes away, noting each
// post answered ok (text -> envelope id) and the one whose answer the
// hub's end took with it.
struct Poster {
  std::map<std::string, std::string> acked;  // read after `thread` joined
  std::atomic<std::size_t> acked_count = 0;  // read while it runs
  std::optional<std::string> unanswered;
  std::thread thread;

  Poster(std::uint16_t port, const std::string& name, const std::string& sender,
         const std::string& channel, const std::string& prefix,
         const std::atomic<bool>& stop) {
    thread = std::thread([=, this, &stop] {
      WsTestClient client("127.0.0.1", port);
      client.send(hello(name));
      if (!client.next_of_kind("welcome")) return;
      for (int i = 0; !stop; ++i) {
        const std::string text = prefix + std::to_string(i);
        json response;
        try {
          response = client.request("post_envelope",
                                    keyed_post(channel, sender, text), 5s);
        } catch (const std::exception&) {
          unanswered = text;
          return;
        }
        if (response["ok"] == true) {
          acked[text] = response["result"];
          ++acked_count;
        }
      }
    });
  }
};

// Alice and bob on the active hub, in a conversation.
struct Conversation {
  std::unique_ptr<WsTestClient> a;
  std::unique_ptr<WsTestClient> b;
  std::string alice;
  std::string bob;
  std::string channel;

  explicit Conversation(std::uint16_t port)
      : a(std::make_unique<WsTestClient>("127.0.0.1", port)),
        b(std::make_unique<WsTestClient>("127.0.0.1", port)) {
    const json no_inbox_limit = {{"limits", {{"inbox", {{"max_pending", 0}}}}}};
    alice = a->register_agent("alice", nullptr, no_inbox_limit);
    bob = b->register_agent("bob", nullptr, no_inbox_limit);
    channel = testing::open_channel(*a, alice, *b, bob);
  }
};

// The text posts of `channel` on the hub at `port`: envelope id -> how
// many times it is in the log.
std::map<std::string, int> logged_posts(std::uint16_t port,
                                        const std::string& channel) {
  WsTestClient client("127.0.0.1", port);
  client.send(hello("alice"));
  REQUIRE(client.next_of_kind("welcome").has_value());
  std::map<std::string, int> seen;
  for (const auto& envelope :
       client.call("read_wal", {{"channel_id", channel}})) {
    if (envelope["event_type"] == "ag2.msg.text")
      ++seen[envelope["envelope_id"]];
  }
  return seen;
}

TEST_CASE(
    "kill -9 of the active hub while clients post: the standby takes over "
    "within the bound with every post answered ok in its log once and "
    "nothing missed by a reconnecting client while the killed hub cannot "
    "come back as writer") {
  testing::ScratchDatabase database;
  ServeProcess active(database.uri(), kLease);
  ServeProcess standby(database.uri(), standby_arguments(),
                       /*wait_listening=*/false);
  REQUIRE_MESSAGE(standby.wait_output("standby: following"), standby.output());
  Conversation talk(active.port());

  std::atomic<bool> stop = false;
  std::vector<std::unique_ptr<Poster>> posters;
  for (const char* prefix : {"x", "y"}) {
    posters.push_back(std::make_unique<Poster>(
        active.port(), "alice", talk.alice, talk.channel, prefix, stop));
  }
  // Killed once enough posts are acked, not after a fixed time: a loaded
  // CI machine acks a handful in a second and a half.
  const auto enough_by = SteadyClock::now() + 60s;
  const auto acked_so_far = [&] {
    std::size_t count = 0;
    for (const auto& poster : posters) count += poster->acked_count;
    return count;
  };
  while (acked_so_far() < 100 && SteadyClock::now() < enough_by) {
    std::this_thread::sleep_for(10ms);
  }
  const auto killed_at = SteadyClock::now();
  kill(active.pid(), SIGKILL);
  REQUIRE_MESSAGE(standby.wait_listening(10s), standby.output());
  const auto failover = std::chrono::duration_cast<std::chrono::milliseconds>(
      SteadyClock::now() - killed_at);
  stop = true;
  std::map<std::string, std::string> acked;
  std::vector<std::string> unanswered;
  for (auto& poster : posters) {
    poster->thread.join();
    acked.insert(poster->acked.begin(), poster->acked.end());
    if (poster->unanswered) unanswered.push_back(*poster->unanswered);
  }
  MESSAGE(acked.size() << " posts acked before kill -9; the standby listened "
                       << failover.count() << " ms after it");
  REQUIRE(acked.size() > 10);
  CHECK(failover < 5s);

  // What bob was told before the kill, and the last of it.
  std::set<std::string> bob_saw;
  std::string since;
  while (auto notify = talk.b->next_of_kind("notify", 500ms)) {
    since = (*notify)["envelope"]["envelope_id"];
    bob_saw.insert(since);
  }

  // Alice moves to the standby: a retried acked post is the same envelope;
  // the posts whose answer was lost land (once, whether or not they had).
  WsTestClient alice("127.0.0.1", standby.port());
  alice.send(hello("alice"));
  REQUIRE(alice.next_of_kind("welcome").has_value());
  int retried = 0;
  for (const auto& item : acked) {
    if (++retried > 20) break;
    const auto& text = item.first;
    const auto& id = item.second;
    auto again = alice.request("post_envelope",
                               keyed_post(talk.channel, talk.alice, text));
    CHECK_MESSAGE(again["result"] == id, again.dump());
  }
  for (const auto& text : unanswered) {
    auto landed = alice.request("post_envelope",
                                keyed_post(talk.channel, talk.alice, text));
    REQUIRE_MESSAGE(landed["ok"] == true, landed.dump());
    acked[text] = landed["result"];
  }
  auto after = alice.request("post_envelope",
                             keyed_post(talk.channel, talk.alice, "after"));
  REQUIRE_MESSAGE(after["ok"] == true, after.dump());
  acked["after"] = after["result"];

  // Bob reconnects with his since-marker: he is told what he missed.
  WsTestClient bob("127.0.0.1", standby.port());
  bob.send(hello("bob", since));
  REQUIRE(bob.next_of_kind("welcome").has_value());
  const auto saw_every_acked = [&] {
    return std::ranges::all_of(
        acked, [&](const auto& item) { return bob_saw.contains(item.second); });
  };
  while (!saw_every_acked()) {
    auto notify = bob.next_of_kind("notify", 10s);
    if (!notify) break;
    bob_saw.insert((*notify)["envelope"]["envelope_id"].get<std::string>());
  }

  const auto logged = logged_posts(standby.port(), talk.channel);
  for (const auto& item : acked) {
    const auto& text = item.first;
    const auto& id = item.second;
    CHECK_MESSAGE(logged.contains(id), "acked post " << text);
    if (logged.contains(id)) CHECK_MESSAGE(logged.at(id) == 1, text);
    CHECK_MESSAGE(bob_saw.contains(id), "bob never got " << text);
  }
  CHECK(logged.size() == acked.size());

  // The killed hub, restarted, finds the store held by the standby.
  auto restarted =
      parley("serve --listen 127.0.0.1:0 --data '" + database.uri() + "'");
  CHECK(restarted.exit_code == 69);
  CHECK_MESSAGE(
      restarted.out.find("is held by another writer") != std::string::npos,
      restarted.out);
  CHECK(standby.stop(SIGTERM) == 0);
  auto audit = parley("audit --data '" + database.uri() + "'");
  CHECK_MESSAGE(audit.exit_code == 0, audit.out);
}

TEST_CASE(
    "a paused active hub loses its lease: the standby ends its session and "
    "takes over and the woken hub acks nothing more and exits") {
  testing::ScratchDatabase database;
  ServeProcess active(database.uri(), kLease);
  ServeProcess standby(database.uri(), standby_arguments(),
                       /*wait_listening=*/false);
  REQUIRE(standby.wait_output("standby: following"));
  Conversation talk(active.port());
  auto first = talk.a->request("post_envelope",
                               keyed_post(talk.channel, talk.alice, "before"));
  REQUIRE(first["ok"] == true);

  const auto paused_at = SteadyClock::now();
  pause_process(active.pid());
  // What is left of the lease the paused hub can no longer renew (a
  // renewal in flight at the pause can only lengthen it).
  const auto lease_asked_at = SteadyClock::now();
  const auto lease_left = testing::run_sql(
      database.uri(),
      "SELECT GREATEST(0, (EXTRACT(EPOCH FROM lease_until - "
      "clock_timestamp()) * 1000)::bigint) FROM parley_writer");
  REQUIRE_MESSAGE(lease_left.has_value(), lease_left.error());
  // Sent while it sleeps: answered (if ever) once it wakes.
  const std::string late = talk.a->send_request(
      "post_envelope", keyed_post(talk.channel, talk.alice, "late"));
  REQUIRE_MESSAGE(standby.wait_listening(10s), standby.output());
  const auto takeover = std::chrono::duration_cast<std::chrono::milliseconds>(
      SteadyClock::now() - paused_at);
  MESSAGE("the standby listened "
          << takeover.count() << " ms after the active hub was paused "
          << "with " << *lease_left << " ms of its lease left");
  // Not before the lease lapsed.
  CHECK(SteadyClock::now() - lease_asked_at >=
        std::chrono::milliseconds(std::stoll(*lease_left)));
  CHECK(takeover < 5s);
  CHECK(standby.output().find("whose lease had lapsed") != std::string::npos);

  kill(active.pid(), SIGCONT);
  std::optional<nlohmann::ordered_json> answer;
  try {
    answer = talk.a->await_response(late, 5s);
  } catch (const std::exception&) {
    // The hub closed the connection without answering: also not an ack.
  }
  if (answer) CHECK_MESSAGE((*answer)["ok"] == false, answer->dump());
  CHECK(active.stop(0, 15s) == 69);
  CHECK(active.output().find("this hub lost its store") != std::string::npos);

  const auto logged = logged_posts(standby.port(), talk.channel);
  CHECK(logged.size() == 1);
  CHECK(logged.contains(first["result"].get<std::string>()));
  CHECK(standby.stop(SIGTERM) == 0);
}

TEST_CASE(
    "a PostgreSQL restart under a serving hub fails its store: the standby "
    "waits the restart out and takes over from the stopping hub with "
    "nothing acked lost") {
  testing::OwnServer server;
  const std::string store = server.uri();
  ServeProcess active(store, kLease);
  ServeProcess standby(store, standby_arguments(), /*wait_listening=*/false);
  REQUIRE(standby.wait_output("standby: following"));
  Conversation talk(active.port());
  auto before = talk.a->request("post_envelope",
                                keyed_post(talk.channel, talk.alice, "before"));
  REQUIRE(before["ok"] == true);

  auto restarted = server.restart();
  REQUIRE_MESSAGE(restarted.exit_code == 0, restarted.err);
  // The restart cut the active hub's writer session, whose lock the
  // standby takes first: the active hub reconnects only when a change asks
  // for it, and nothing here asks before the standby listens.
  REQUIRE_MESSAGE(standby.wait_listening(20s), standby.output());
  // The active hub then finds the store taken: it acks nothing more.
  try {
    auto during = talk.a->request(
        "post_envelope", keyed_post(talk.channel, talk.alice, "during"), 5s);
    CHECK_MESSAGE(during["ok"] == false, during.dump());
  } catch (const std::exception&) {
    // Or it closed the connection first: no ack either.
  }
  CHECK(active.stop(0, 20s) == 69);
  CHECK(active.output().find("this hub lost its store") != std::string::npos);

  WsTestClient alice("127.0.0.1", standby.port());
  alice.send(hello("alice"));
  REQUIRE(alice.next_of_kind("welcome").has_value());
  auto after = alice.request("post_envelope",
                             keyed_post(talk.channel, talk.alice, "after"));
  REQUIRE_MESSAGE(after["ok"] == true, after.dump());
  const auto logged = logged_posts(standby.port(), talk.channel);
  CHECK(logged.contains(before["result"].get<std::string>()));
  CHECK(logged.contains(after["result"].get<std::string>()));
  CHECK(standby.stop(SIGTERM) == 0);
}

TEST_CASE(
    "a PostgreSQL restart under a serving hub without a standby: posts fail "
    "while the database is down and then the hub reconnects by itself and "
    "acks again with nothing acked lost") {
  testing::OwnServer server;
  // A lease the restart cannot outlast: the hub keeps its store.
  ServeProcess active(server.uri(), {"--lease-timeout", "30"});
  Conversation talk(active.port());
  auto before = talk.a->request("post_envelope",
                                keyed_post(talk.channel, talk.alice, "before"));
  REQUIRE(before["ok"] == true);

  auto restarted = server.restart();
  REQUIRE_MESSAGE(restarted.exit_code == 0, restarted.err);
  // The first post after the restart finds the writer session cut, or is
  // the one that reconnects; within a few seconds the hub acks again.
  std::optional<json> after;
  int refused = 0;
  const auto deadline = SteadyClock::now() + 20s;
  while (!after && SteadyClock::now() < deadline) {
    auto answer = talk.a->request(
        "post_envelope",
        keyed_post(talk.channel, talk.alice, "after" + std::to_string(refused)),
        10s);
    if (answer["ok"] == true) {
      after = answer;
    } else {
      ++refused;
      INFO(answer.dump());
      std::this_thread::sleep_for(200ms);
    }
  }
  REQUIRE_MESSAGE(after.has_value(), active.output());
  MESSAGE(refused << " posts refused before the hub reconnected");
  const auto logged = logged_posts(active.port(), talk.channel);
  CHECK(logged.at(before["result"].get<std::string>()) == 1);
  CHECK(logged.at((*after)["result"].get<std::string>()) == 1);
  CHECK(active.stop(SIGTERM) == 0);
  auto audit = parley("audit --data '" + server.uri() + "' -o text");
  CHECK_MESSAGE(audit.exit_code == 0, audit.out);
}

// A hub with a 1 s lease serving alice and bob on a server of the test's
// own, one post acked, then every process of that server stopped.
struct HubOnStalledDatabase {
  testing::OwnServer server;
  ServeProcess active{server.uri(), kLease};
  Conversation talk{active.port()};

  HubOnStalledDatabase() {
    auto before = talk.a->request(
        "post_envelope", keyed_post(talk.channel, talk.alice, "before"));
    REQUIRE(before["ok"] == true);
    auto paused = server.pause();
    REQUIRE_MESSAGE(paused.exit_code == 0, paused.err);
  }
  void resume_database() {
    auto resumed = server.resume();
    REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  }
};

TEST_CASE(
    "a database that stops answering under a serving hub with a post in "
    "flight: the hub's lease lapses and it answers that post with an error "
    "and exits 69 within a bound without waiting for the database") {
  HubOnStalledDatabase hub;
  const auto paused_at = SteadyClock::now();
  std::optional<json> answer;
  std::thread poster([&] {
    try {
      answer = hub.talk.a->request(
          "post_envelope",
          keyed_post(hub.talk.channel, hub.talk.alice, "during"), 30s);
    } catch (const std::exception&) {
      // The hub closed the connection first: no ack either.
    }
  });
  const int code = hub.active.stop(0, 20s);
  const auto stopped_after =
      std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() -
                                                            paused_at);
  poster.join();
  hub.resume_database();
  CHECK_MESSAGE(code == 69, hub.active.output());
  MESSAGE("stopped " << stopped_after.count()
                     << " ms after the database was paused (lease 1 s)");
  CHECK(hub.active.output().find("this hub lost its store") !=
        std::string::npos);
  if (answer) CHECK_MESSAGE((*answer)["ok"] == false, answer->dump());
}

TEST_CASE(
    "SIGTERM to a hub whose database stopped answering: it exits 69 within "
    "its lease and does not wait for the database") {
  HubOnStalledDatabase hub;
  const auto signalled_at = SteadyClock::now();
  const int code = hub.active.stop(SIGTERM, 20s);
  const auto stopped_after =
      std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() -
                                                            signalled_at);
  hub.resume_database();
  MESSAGE("stopped " << stopped_after.count()
                     << " ms after SIGTERM (lease 1 s)");
  // The drain closes the store, whose last wait (releasing the writer's
  // lock) ends once the lease has lapsed.
  CHECK_MESSAGE(code == 69, hub.active.output());
  CHECK(hub.active.output().find("this hub lost its store") !=
        std::string::npos);
  CHECK(hub.active.output().find("second signal; exiting now") ==
        std::string::npos);
}

TEST_CASE("a standby stopped before it took over exits 0 and wrote nothing") {
  testing::ScratchDatabase database;
  ServeProcess active(database.uri(), kLease);
  ServeProcess standby(database.uri(), standby_arguments(),
                       /*wait_listening=*/false);
  REQUIRE(standby.wait_output("standby: following"));
  const std::string epoch =
      testing::run_sql(database.uri(), "SELECT epoch FROM parley_writer")
          .value_or("?");
  CHECK(standby.stop(SIGTERM) == 0);
  CHECK(standby.output().find("standby stopped before taking over") !=
        std::string::npos);
  CHECK(testing::run_sql(database.uri(), "SELECT epoch FROM parley_writer") ==
        epoch);
  CHECK(active.stop(SIGTERM) == 0);
}

TEST_CASE("a standby needs an existing store") {
  testing::ScratchDatabase database;
  auto refused = parley("serve --standby --listen 127.0.0.1:0 --data '" +
                        database.uri() + "'");
  CHECK(refused.exit_code == 66);
  CHECK_MESSAGE(refused.out.find("standby cannot read") != std::string::npos,
                refused.out);
}

}  // namespace
}  // namespace parley
