// The soak's load on a hub, through parley::client over WebSocket: three
// connections carrying alice, bob and carol, and for the whole run
//   - the "talk" conversation (alice and bob), on which each of them keeps
//     `window` text posts in flight;
//   - cycles, each repeated after `cycle_pause`: a consulting question and
//     answer (closed by the hub), a discussion round then a close, a
//     workflow run to its terminating transition, a conversation with a
//     one-second TTL left for the sweeper to close, and a throw-away agent
//     that registers, opens a conversation, posts, closes it and
//     unregisters.
// Every agent acks its invites and sends a receipt for every envelope.
//
// Failures: while the server restarts (set_restarting) a failed call is
// expected (the hub drains, the link drops), and so is one on a channel
// the TTL sweep expired (a TTL cycle's channel may expire before its
// handshake ends on a slow machine); any other failure is unexpected and
// kept (its first few messages) for the verdict. A failed
// talk post is never counted as acked: only ids the hub answered ok are.
//
// Threading: start() and the accessors run on the caller's thread; the
// load runs on the executor's thread(s), on the clients' strands.
#pragma once

#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace parley::soak {

enum class CycleKind {
  kConsulting,
  kDiscussion,
  kWorkflow,
  kTtl,
  kThrowAwayAgent
};
inline constexpr std::size_t kCycleKinds = 5;
std::string_view cycle_name(CycleKind kind);

struct WorkloadOptions {
  std::string url;  // ws://127.0.0.1:PORT
  int window = 4;   // talk posts in flight per poster
  std::chrono::milliseconds cycle_pause{100};
  // Before every agent name (alice, bob, carol, temp-N): workloads that
  // share a hub need distinct names, as a hub refuses a name registered.
  std::string name_prefix;
  std::function<void(std::string_view)> log;  // any thread
};

struct WorkloadCounts {
  std::uint64_t talk_posts = 0;  // answered ok
  std::array<std::uint64_t, kCycleKinds> cycles{};
  std::uint64_t channels_created = 0;
  std::uint64_t ttl_closes_seen = 0;  // by carol, reason ttl_expired
  // alice, bob, carol and the throw-away agents not (yet) unregistered.
  std::uint64_t agents_registered = 3;
  std::uint64_t expected_failures = 0;
  std::uint64_t unexpected_failures = 0;
};

class Workload {
 public:
  // Connects, registers the three agents and opens the talk conversation;
  // blocks. Throws std::runtime_error naming what failed.
  static std::unique_ptr<Workload> start(boost::asio::any_io_executor executor,
                                         WorkloadOptions options);
  ~Workload();

  const std::string& talk_channel() const;
  // Starts the talk posters and the cycles.
  void run();
  // Starts no more work and waits (up to `timeout`) for what is in flight;
  // false when some of it never finished.
  bool stop(std::chrono::milliseconds timeout);
  // Whether failures now are expected (the server is being restarted).
  void set_restarting(bool restarting);

  WorkloadCounts counts() const;
  // The first unexpected failures, as "what: code: message".
  std::vector<std::string> unexpected() const;
  // The envelope ids of every talk post the hub answered ok.
  std::vector<std::string> acked_talk_ids() const;

  struct State;

 private:
  explicit Workload(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace parley::soak
