// The completion-style hub calls (Dispatch::kAsync) and the op layer's
// non-blocking call: nothing blocks the caller, outcomes arrive on the
// hub's own thread, and they mean what the blocking calls mean.
#include <doctest/doctest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <future>
#include <initializer_list>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/ops/invite_reply.h"
#include "log/forwarding_log_store.h"
#include "tests/hub_fixture.h"

namespace parley::testing {
namespace {

using engine::ChannelMetadata;
using engine::ChannelState;
using engine::Result;
using nlohmann::json;
using namespace std::chrono_literals;

// The outcome a completion-style call told, and the thread it told it on.
template <typename T>
struct Told {
  std::promise<std::pair<Result<T>, std::thread::id>> promise;
  std::future<std::pair<Result<T>, std::thread::id>> future =
      promise.get_future();

  engine::Done<T> done() {
    return [this](Result<T> result) {
      promise.set_value({std::move(result), std::this_thread::get_id()});
    };
  }
  bool ready() const {
    return future.wait_for(0s) == std::future_status::ready;
  }
  std::pair<Result<T>, std::thread::id> get() {
    REQUIRE(future.wait_for(30s) == std::future_status::ready);
    return future.get();
  }
};

engine::Envelope text(std::string_view channel, std::string_view sender,
                      std::string_view body) {
  engine::Envelope envelope;
  envelope.channel_id = std::string(channel);
  envelope.sender_id = std::string(sender);
  envelope.event_type = std::string(engine::event_type::kText);
  envelope.event_data = engine::to_flex(json{{"text", body}}).value();
  return envelope;
}

// The invite in `invitee`'s inbox, waited for up to 3 s; nullopt if none
// came.
std::optional<engine::Envelope> invite_to(TestHub& th,
                                          const std::string& invitee) {
  for (int i = 0; i < 3000; ++i) {
    for (const auto& envelope : th.inbox(invitee)) {
      if (envelope.event_type == engine::event_type::kChannelInvite) {
        return envelope;
      }
    }
    std::this_thread::sleep_for(1ms);
  }
  return std::nullopt;
}

// A TestHub whose create_channel waits 30 s for acks, with alice and the
// silent invitees `names` registered (in that order after her).
struct Handshakes {
  explicit Handshakes(std::initializer_list<const char*> names) {
    th.set_options([](engine::HubOptions& options) {
      options.invite_ack_timeout = std::chrono::seconds(30);
    });
    th.restart();
    alice = th.add_agent("alice");
    for (const char* name : names) {
      invitees.push_back(th.add_agent(name));
      th.set_invitee(invitees.back(), TestHub::Invitee::kSilent);
    }
  }
  TestHub th;
  std::string alice;
  std::vector<std::string> invitees;
};

// A store whose flushes, once held, wait for release() on every thread but
// the one that held them: the hub's log thread stops writing its groups,
// while that thread's own flushes write them. A flush waits at most 30 s,
// so a failed test cannot hang the hub's close.
class HeldFlushStore final : public log::ForwardingLogStore {
 public:
  using ForwardingLogStore::ForwardingLogStore;

  void hold() { holder_ = std::this_thread::get_id(); }
  void release() { release_.set_value(); }

  log::Result<void> flush() override {
    if (holder_ != std::thread::id{} && std::this_thread::get_id() != holder_) {
      released_.wait_for(30s);
    }
    return store_->flush();
  }

 private:
  std::atomic<std::thread::id> holder_;
  std::promise<void> release_;
  std::shared_future<void> released_ = release_.get_future().share();
};

// A store that names the thread that sequenced each deferred batch.
class AppendingThreadStore final : public log::ForwardingLogStore {
 public:
  using ForwardingLogStore::ForwardingLogStore;

  log::Result<void> append_deferred(std::span<log::AppendEntry> batch,
                                    DurableCallback on_durable) override {
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    {
      std::lock_guard lock(mutex_);
      threads_.emplace_back(name);
    }
    return store_->append_deferred(batch, std::move(on_durable));
  }
  std::vector<std::string> threads() const {
    std::lock_guard lock(mutex_);
    return threads_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> threads_;
};

// A TestHub on a HeldFlushStore, with alice and bob in a conversation.
struct HeldConversation {
  HeldConversation() {
    th.set_options([this](engine::HubOptions& options) {
      store = std::make_shared<HeldFlushStore>(std::move(options.store));
      options.store = store;
    });
    th.restart();
    alice = th.add_agent("alice");
    const std::string bob = th.add_agent("bob");
    auto channel = th.open(alice, "conversation", {bob});
    REQUIRE(channel.has_value());
    channel_id = channel->channel_id;
  }
  TestHub th;
  std::shared_ptr<HeldFlushStore> store;
  std::string alice;
  std::string channel_id;
};

}  // namespace

TEST_SUITE("hub_async") {
  TEST_CASE("a completion-style post is told on the hub's thread") {
    TestHub th;
    const std::string alice = th.add_agent("alice");
    const std::string bob = th.add_agent("bob");
    auto channel = th.open(alice, "conversation", {bob});
    REQUIRE(channel.has_value());

    Told<std::string> told;
    th.hub().post_envelope(text(channel->channel_id, alice, "hi"), told.done());
    auto posted_told = told.get();
    // A reference, not a binding: the message captures it (clang 14).
    auto& posted = posted_told.first;
    auto& thread = posted_told.second;
    REQUIRE_MESSAGE(posted.has_value(), error_message(posted));
    CHECK(thread != std::this_thread::get_id());
    const auto wal = th.wal(channel->channel_id);
    REQUIRE_FALSE(wal.empty());
    CHECK(wal.back().envelope_id == *posted);
  }

  TEST_CASE(
      "a lone completion-style post is told on the log thread that made it "
      "durable") {
    TestHub th;
    const std::string alice = th.add_agent("alice");
    const std::string bob = th.add_agent("bob");
    auto channel = th.open(alice, "conversation", {bob});
    REQUIRE(channel.has_value());

    std::promise<std::string> thread_name;
    th.hub().post_envelope(
        text(channel->channel_id, alice, "hi"),
        [&](Result<std::string> posted) {
          char name[16] = {};
          pthread_getname_np(pthread_self(), name, sizeof name);
          thread_name.set_value(posted ? name : posted.error().message);
        });
    auto told = thread_name.get_future();
    REQUIRE(told.wait_for(30s) == std::future_status::ready);
    CHECK(told.get() == "parley-log");
  }

  TEST_CASE("completion-style posts keep their channel's submission order") {
    TestHub th;
    const std::string alice = th.add_agent("alice");
    const std::string bob = th.add_agent("bob");
    auto channel = th.open(alice, "conversation", {bob});
    REQUIRE(channel.has_value());

    constexpr int kPosts = 300;
    std::vector<Told<std::string>> told(kPosts);
    for (int i = 0; i < kPosts; ++i) {
      th.hub().post_envelope(text(channel->channel_id, i % 2 ? bob : alice,
                                  "text " + std::to_string(i)),
                             told[i].done());
    }
    std::vector<std::string> ids;
    for (auto& one : told) {
      auto posted_told = one.get();
      // A reference, not a binding: the message captures it (clang 14).
      auto& posted = posted_told.first;
      REQUIRE_MESSAGE(posted.has_value(), error_message(posted));
      ids.push_back(*posted);
    }
    std::vector<std::string> logged;
    for (const auto& envelope : th.wal(channel->channel_id)) {
      if (envelope.event_type == engine::event_type::kText) {
        logged.push_back(envelope.envelope_id);
      }
    }
    CHECK(logged == ids);
    CHECK(th.state(channel->channel_id)["turn_count"] == kPosts);
  }

  TEST_CASE(
      "read_wal returns a post the state shows before its group is written") {
    HeldConversation held;
    TestHub& th = held.th;
    HeldFlushStore& store = *held.store;
    const std::string& alice = held.alice;
    const std::string& channel_id = held.channel_id;

    store.hold();
    Told<std::string> told;
    th.hub().post_envelope(text(channel_id, alice, "hi"), told.done());
    // The state folds the post when it is sequenced; the log thread, held,
    // has not written it.
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (th.state(channel_id)["turn_count"] != 1 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    REQUIRE(th.state(channel_id)["turn_count"] == 1);

    const auto wal = th.wal(channel_id);
    REQUIRE_FALSE(wal.empty());
    CHECK(engine::flex_to_json(wal.back().event_data)["text"] == "hi");
    // Reading it made it durable.
    auto posted_told = told.get();
    auto& posted = posted_told.first;
    REQUIRE_MESSAGE(posted.has_value(), error_message(posted));
    CHECK(wal.back().envelope_id == *posted);
    store.release();
  }

  TEST_CASE(
      "a completion-style post is staged before the call returns when no "
      "other thread stages") {
    HeldConversation held;
    TestHub& th = held.th;
    HeldFlushStore& store = *held.store;
    const std::string& alice = held.alice;
    const std::string& channel_id = held.channel_id;

    store.hold();
    Told<std::string> told;
    th.hub().post_envelope(text(channel_id, alice, "hi"), told.done());
    // Folded on this thread, with no hop to the committer's; not yet told,
    // as the held log thread has not written it.
    CHECK(th.state(channel_id)["turn_count"] == 1);
    CHECK_FALSE(told.ready());
    store.release();
    auto posted_told = told.get();
    auto& posted = posted_told.first;
    REQUIRE_MESSAGE(posted.has_value(), error_message(posted));
    CHECK(posted_told.second != std::this_thread::get_id());
  }

  TEST_CASE(
      "completion-style posts made in a submission batch are staged when it "
      "ends") {
    TestHub th;
    const std::string alice = th.add_agent("alice");
    const std::string bob = th.add_agent("bob");
    auto channel = th.open(alice, "conversation", {bob});
    REQUIRE(channel.has_value());

    std::vector<Told<std::string>> told(3);
    {
      const engine::Hub::SubmissionBatch batch(th.hub());
      for (auto& one : told) {
        th.hub().post_envelope(text(channel->channel_id, alice, "hi"),
                               one.done());
      }
      // Queued only: nothing staged while the batch is open.
      CHECK(th.state(channel->channel_id)["turn_count"] == 0);
    }
    // Staged on this thread as the batch ended.
    CHECK(th.state(channel->channel_id)["turn_count"] == 3);
    for (auto& one : told) {
      auto posted_told = one.get();
      auto& posted = posted_told.first;
      REQUIRE_MESSAGE(posted.has_value(), error_message(posted));
    }
  }

  TEST_CASE("a post made from a completion is staged on the log thread") {
    TestHub th;
    std::shared_ptr<AppendingThreadStore> store;
    th.set_options([&store](engine::HubOptions& options) {
      store = std::make_shared<AppendingThreadStore>(std::move(options.store));
      options.store = store;
    });
    th.restart();
    const std::string alice = th.add_agent("alice");
    const std::string bob = th.add_agent("bob");
    auto channel = th.open(alice, "conversation", {bob});
    REQUIRE(channel.has_value());
    const std::size_t before = store->threads().size();

    // The first post completes on the log thread, which posts the second:
    // staging that one on the committer's thread would cost a wake-up.
    Told<std::string> first;
    Told<std::string> second;
    th.hub().post_envelope(text(channel->channel_id, alice, "first"),
                           [&](Result<std::string> posted) {
                             first.done()(std::move(posted));
                             th.hub().post_envelope(
                                 text(channel->channel_id, alice, "second"),
                                 second.done());
                           });
    for (Told<std::string>* told : {&first, &second}) {
      auto posted_told = told->get();
      auto& posted = posted_told.first;
      REQUIRE_MESSAGE(posted.has_value(), error_message(posted));
    }
    const auto threads = store->threads();
    REQUIRE(threads.size() == before + 2);
    CHECK(threads[before + 1] == "parley-log");
  }

  TEST_CASE("a completion-style refusal is the blocking call's refusal") {
    TestHub th;
    const std::string alice = th.add_agent("alice");
    Told<std::string> told;
    th.hub().post_envelope(text("no-such-channel", alice, "hi"), told.done());
    auto [refused, thread] = told.get();
    auto blocking =
        th.hub().post_envelope(text("no-such-channel", alice, "hi"));
    REQUIRE_FALSE(refused.has_value());
    REQUIRE_FALSE(blocking.has_value());
    CHECK(refused.error().kind == blocking.error().kind);
    CHECK(refused.error().message == blocking.error().message);
  }

  TEST_CASE(
      "create_channel returns at once and completes when the invitee acks") {
    Handshakes h({"bob"});
    TestHub& th = h.th;
    const std::string& alice = h.alice;
    const std::string& bob = h.invitees[0];

    Told<ChannelMetadata> told;
    th.hub().create_channel({.creator_id = alice,
                             .manifest_type = "conversation",
                             .participants = {bob}},
                            told.done());
    // The caller is free while the handshake waits: find the invite, ack it.
    const std::optional<engine::Envelope> invite = invite_to(th, bob);
    REQUIRE(invite.has_value());
    CHECK_FALSE(told.ready());
    Told<std::string> acked;
    th.hub().post_envelope(engine::invite_reply(*invite, bob, std::nullopt),
                           acked.done());
    auto ack_told = acked.get();
    // A reference, not a binding: the message captures it (clang 14).
    auto& ack = ack_told.first;
    REQUIRE_MESSAGE(ack.has_value(), error_message(ack));
    auto opened_told = told.get();
    // A reference, not a binding: the message captures it (clang 14).
    auto& opened = opened_told.first;
    auto& thread = opened_told.second;
    REQUIRE_MESSAGE(opened.has_value(), error_message(opened));
    CHECK(opened->state == ChannelState::kActive);
    CHECK(thread != std::this_thread::get_id());
  }

  TEST_CASE(
      "an invitee's ack completes its own channel's create_channel and no "
      "other") {
    Handshakes h({"bob", "carol"});
    TestHub& th = h.th;
    const std::string& alice = h.alice;
    const std::string& bob = h.invitees[0];
    const std::string& carol = h.invitees[1];
    auto ack = [&th](const engine::Envelope& invite, const std::string& by) {
      Told<std::string> acked;
      th.hub().post_envelope(engine::invite_reply(invite, by, std::nullopt),
                             acked.done());
      auto told = acked.get();
      REQUIRE_MESSAGE(told.first.has_value(), error_message(told.first));
    };
    auto expect_opened = [](Told<ChannelMetadata>& told,
                            const engine::Envelope& invite) {
      auto told_now = told.get();
      // A reference, not a binding: the message captures it (clang 14).
      auto& opened = told_now.first;
      REQUIRE_MESSAGE(opened.has_value(), error_message(opened));
      CHECK(opened->channel_id == invite.channel_id);
      CHECK(opened->state == ChannelState::kActive);
    };

    Told<ChannelMetadata> with_bob;
    Told<ChannelMetadata> with_carol;
    th.hub().create_channel({.creator_id = alice,
                             .manifest_type = "conversation",
                             .participants = {bob}},
                            with_bob.done());
    th.hub().create_channel({.creator_id = alice,
                             .manifest_type = "conversation",
                             .participants = {carol}},
                            with_carol.done());
    const std::optional<engine::Envelope> bob_invite = invite_to(th, bob);
    const std::optional<engine::Envelope> carol_invite = invite_to(th, carol);
    REQUIRE(bob_invite.has_value());
    REQUIRE(carol_invite.has_value());

    ack(*carol_invite, carol);
    expect_opened(with_carol, *carol_invite);
    CHECK_FALSE(with_bob.ready());
    ack(*bob_invite, bob);
    expect_opened(with_bob, *bob_invite);
  }

  TEST_CASE("create_channel's ack timeout is told without a waiting thread") {
    TestHub th;
    th.set_options([](engine::HubOptions& options) {
      options.invite_ack_timeout = 100ms;
    });
    th.restart();
    const std::string alice = th.add_agent("alice");
    const std::string bob = th.add_agent("bob");
    th.set_invitee(bob, TestHub::Invitee::kSilent);

    Told<ChannelMetadata> told;
    th.hub().create_channel({.creator_id = alice,
                             .manifest_type = "conversation",
                             .participants = {bob}},
                            told.done());
    auto [timed_out, thread] = told.get();
    REQUIRE_FALSE(timed_out.has_value());
    CHECK(timed_out.error().kind == engine::ErrorKind::kProtocol);
    CHECK(timed_out.error().message.ends_with(" ack timeout"));
    const auto channels = th.hub().list_channels({}, {});
    REQUIRE(channels.size() == 1);
    CHECK(channels.front().state == ChannelState::kClosed);
    CHECK(channels.front().close_reason == "invite_timeout");
  }

  TEST_CASE("a completion-style call on a closed hub is told at once") {
    TestHub th;
    const std::string alice = th.add_agent("alice");
    REQUIRE(th.hub().close().has_value());
    Told<void> told;
    th.hub().set_skill(alice, "# skill", told.done());
    REQUIRE(told.ready());
    auto [result, thread] = told.get();
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().message == "the hub is closed");
    CHECK(thread == std::this_thread::get_id());
  }

  TEST_CASE("the op layer answers a read at once and a mutation once durable") {
    TestHub th;
    const std::string alice = th.add_agent("alice");

    std::optional<Result<json>> read;
    th.ops().call("get_agent", {{"name_or_id", "alice"}}, nullptr,
                  [&read](Result<json> answer) { read = std::move(answer); });
    REQUIRE(read.has_value());
    REQUIRE(read->has_value());
    CHECK((**read)["agent_id"] == alice);

    const auto before = th.hub().get_resume(alice);
    REQUIRE(before.has_value());
    std::promise<std::pair<Result<json>, std::thread::id>> promise;
    th.ops().call(
        "set_resume", {{"agent_id", alice}, {"resume", {{"summary", "async"}}}},
        nullptr, [&promise](Result<json> answer) {
          promise.set_value({std::move(answer), std::this_thread::get_id()});
        });
    auto future = promise.get_future();
    REQUIRE(future.wait_for(30s) == std::future_status::ready);
    auto written_told = future.get();
    // A reference, not a binding: the message captures it (clang 14).
    auto& written = written_told.first;
    auto& thread = written_told.second;
    REQUIRE_MESSAGE(written.has_value(), error_message(written));
    CHECK(written->is_null());
    CHECK(thread != std::this_thread::get_id());
    auto resume = th.hub().get_resume(alice);
    REQUIRE(resume.has_value());
    CHECK(resume->version == before->version + 1);
    CHECK(resume->summary == "async");
  }

}  // TEST_SUITE

}  // namespace parley::testing
