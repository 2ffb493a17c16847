// HumanClient: a participant that is not an LLM (a person at a UI, a bridge,
// a scripted user), as AG2's HumanClient. Registered with register_human
// (kind "human") or re-attached with attach, on a HubClient of either link.
//
// Inbound, for each envelope delivered to the human, in delivery order:
//   1. with auto_ack_invites (the default), an EV_CHANNEL_INVITE from
//      someone else is accepted first (EV_CHANNEL_INVITE_ACK posted; a
//      failure is ignored), so the hub's handshake completes without a UI;
//   2. the envelope is queued for the pull side (next_envelope);
//   3. every push callback (on_envelope) runs, in registration order; one
//      that throws is logged and the others still run;
//   4. the receipt (ack) is sent.
// The pull queue is unbounded: the embedder drains it. next_envelope takes
// the oldest queued envelope and discards the ones its predicate refuses
// (register a callback to see every envelope).
//
// Threading: every member may be called from any thread; callbacks,
// predicates and handlers run on the HubClient's strand and must not block.
// Lifetime: owned by shared_ptr; it keeps its HubClient alive. After
// disconnect() nothing more is delivered, waiting next_envelope calls and
// later sends fail with kClosed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/client/hub_client.h"
#include "engine/client/open_channel.h"

namespace parley::client {

struct HumanOptions {
  bool auto_ack_invites = true;
};

class HumanClient {
 public:
  using Callback = std::function<void(const Envelope&)>;
  using Predicate = std::function<bool(const Envelope&)>;
  using CallbackId = std::uint64_t;

  // Registers `registration` as a human through `hub`
  // (HubClient::register_human).
  static void register_human(std::shared_ptr<HubClient> hub,
                             Registration registration, HumanOptions options,
                             Handler<std::shared_ptr<HumanClient>> done);
  // Re-attaches the human registered as `name` (HubClient::attach, replaying
  // what it has not acked).
  static void attach(std::shared_ptr<HubClient> hub, std::string name,
                     engine::AuthInfo auth, HumanOptions options,
                     Handler<std::shared_ptr<HumanClient>> done);

  struct State;
  explicit HumanClient(std::shared_ptr<State> state);
  HumanClient(const HumanClient&) = delete;
  HumanClient& operator=(const HumanClient&) = delete;
  ~HumanClient();

  // The stamped passport; fixed once registered.
  const Passport& passport() const;
  const std::string& agent_id() const;
  HubClient& hub_client() const;

  // Opens a channel as its initiator; `done` once every invitee acked.
  void open(OpenRequest request, Handler<ChannelMetadata> done);
  // Posts an EV_TEXT; returns its envelope id.
  void send(std::string channel_id, std::string text, Handler<std::string> done,
            std::optional<std::vector<std::string>> audience = {},
            std::optional<std::string> causation_id = {});
  // Posts any envelope; an empty sender_id is stamped with the human's id.
  void post_envelope(Envelope envelope, Handler<std::string> done);
  void close_channel(std::string channel_id, Handler<ChannelMetadata> done,
                     std::string reason = "human_closed");

  // Push: `callback` runs for every later envelope.
  CallbackId on_envelope(Callback callback);
  // Detaches a callback; an unknown id does nothing.
  void remove_envelope_callback(CallbackId id);
  // Pull: the next queued envelope `predicate` accepts (any, when empty),
  // or kTimeout after `timeout` (nullopt: no limit).
  void next_envelope(Predicate predicate,
                     std::optional<std::chrono::milliseconds> timeout,
                     Handler<Envelope> done);

  // Pull, as a stream (AG2's `async for envelope in human.envelopes()`):
  // `each` gets every queued envelope in order, one at a time (the next
  // once it calls `next`), until disconnect(), when `end` is told success.
  // Shares the queue with next_envelope.
  using StreamStep =
      std::function<void(const Envelope& envelope, std::function<void()> next)>;
  void for_each_envelope(StreamStep each, Handler<void> end);

  // Stops deliveries to this human. Idempotent.
  void disconnect();

 private:
  std::shared_ptr<State> state_;
};

}  // namespace parley::client
