// HubClient's internals (internal to the client library): the agents on the
// connection, their delivery and receipts, the calls in flight, and the link
// with its reconnection.
//
// Threading: every member runs on strand_ (the public HubClient posts to
// it). Invariant: link_ is set exactly while state_ is kOpening or kUp;
// callbacks of an older link carry its generation and are dropped.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "engine/client/hub_client.h"
#include "engine/client/link.h"
#include "engine/client/strand.h"

namespace parley::client {

// Writes a line to standard error.
std::function<void(std::string_view)> default_log();

using LinkFactory =
    std::function<std::shared_ptr<Link>(std::weak_ptr<LinkEvents>)>;

class HubClientImpl : public LinkEvents,
                      public std::enable_shared_from_this<HubClientImpl> {
 public:
  HubClientImpl(Strand strand, LinkFactory make_link, bool in_process,
                HubClientOptions options);

  const Strand& strand() const { return strand_; }
  bool in_process() const { return in_process_; }
  const HubClientOptions& options() const { return options_; }
  void log(std::string_view line) const;

  // Opens a link and re-attaches every agent; `done` when all are.
  void connect_link(Handler<void> done);
  void disconnect();
  void close();

  // One op with a timeout (0: the default).
  void start_call(std::string op, nlohmann::json params,
                  std::chrono::milliseconds timeout,
                  std::function<void(Result<nlohmann::json>)> done);
  // After a successful register: deliveries to `passport` go to `handler`.
  void add_agent(const Passport& passport, const engine::AuthInfo& auth,
                 EnvelopeHandler handler);
  void attach(std::string name, engine::AuthInfo auth, EnvelopeHandler handler,
              std::optional<std::string> since, Handler<Passport> done);
  void register_identity(Registration registration, EnvelopeHandler handler,
                         Handler<Passport> done);
  // The unregister op; on success the agent and its waiting envelopes are
  // dropped here and at the link.
  void unregister_identity(std::string agent_id, Handler<void> done);

  // LinkEvents.
  void on_notify(std::string recipient_id, engine::Envelope envelope) override;
  void on_link_lost(std::string why) override;

 private:
  enum class State { kDown, kOpening, kUp, kClosed };

  struct Agent {
    std::string agent_id;
    std::string name;
    engine::AuthInfo auth;
    EnvelopeHandler handler;
    // Envelope ids given to the handler: true once it finished. Bounded by
    // kSeenLimit (oldest forgotten first).
    std::unordered_map<std::string, bool> seen;
    std::deque<std::string> seen_order;
  };

  struct Call {
    std::string op;
    nlohmann::json params;
    std::function<void(Result<nlohmann::json>)> done;
    bool answered = false;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };

  struct Receipt {
    std::string recipient_id, channel_id, envelope_id, status, reason;
  };

  // link_->hello, answered kTimeout after options_.rpc_timeout.
  void hello(HelloRequest request, std::function<void(Result<void>)> done);
  void send_call(const std::shared_ptr<Call>& call);
  void answer(const std::shared_ptr<Call>& call, Result<nlohmann::json> r);
  void deliver(Agent& agent, engine::Envelope envelope);
  void finished(const std::string& recipient_id, const std::string& channel_id,
                const std::string& envelope_id, bool ok, std::string reason);
  void send_receipt(Receipt receipt);
  void link_up();
  void schedule_reconnect();

  static constexpr std::size_t kSeenLimit = 100000;
  static constexpr std::size_t kOrphanLimit = 1000;

  Strand strand_;
  LinkFactory make_link_;
  const bool in_process_;
  HubClientOptions options_;

  State state_ = State::kDown;
  std::shared_ptr<Link> link_;
  std::uint64_t generation_ = 0;
  bool reconnect_wanted_ = false;  // false after disconnect() or close()
  std::chrono::milliseconds backoff_{0};
  std::unique_ptr<boost::asio::steady_timer> reconnect_timer_;

  std::map<std::string, Agent> agents_;
  // Envelopes for a recipient not known yet (a register's answer may come
  // after the first deliveries to the new agent).
  std::map<std::string, std::vector<engine::Envelope>> orphans_;
  std::deque<std::shared_ptr<Call>> waiting_;  // made while not kUp
  std::vector<Receipt> unsent_receipts_;       // finished while not kUp
};

}  // namespace parley::client
