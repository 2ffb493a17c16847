#include "engine/transport/connection.h"

#include <iostream>
#include <variant>

#include "engine/base/clock.h"
#include "engine/base/event_types.h"
#include "engine/base/ids.h"
#include "engine/hub/hub.h"
#include "engine/ops/authorization.h"
#include "engine/ops/control_plane.h"
#include "engine/transport/binding_table.h"
#include "engine/transport/connection_registry.h"
#include "engine/transport/frame_codec.h"
#include "engine/transport/hot_frames.h"
#include "engine/transport/metrics.h"
#include "engine/transport/wire_order.h"

namespace parley::transport {

Connection::Connection(ServerContext& context, std::string peer)
    : context_(context),
      id_(context.next_connection_id.fetch_add(1)),
      peer_(std::move(peer)),
      endpoint_id_(engine::new_id()),
      queue_(context.options.send_queue, &context.send_queue_total),
      replay_order_(context.options.send_queue) {}

bool Connection::holds(std::string_view agent_id) const {
  return context_.bindings.holds(*this, agent_id);
}

std::vector<std::string> Connection::bound_agents() const {
  return context_.bindings.agents_of(*this);
}

void Connection::close_slow_consumer(std::string_view queued) {
  log("closing: send queue full (" + std::string(queued) +
      "): the client does not read fast enough");
  close(kClosePolicy, "send queue full: the client does not read fast enough");
}

bool Connection::send_notify(
    const std::shared_ptr<const engine::Envelope>& envelope,
    const std::string& recipient_id) {
  if (!send(OutgoingFrame::notify(envelope, recipient_id))) return false;
  context_.metrics.notify_sent();
  return true;
}

void Connection::deliver(
    const std::string& recipient_id,
    const std::shared_ptr<const engine::Envelope>& envelope) {
  const auto verdict = replay_order_.live(
      envelope, recipient_id,
      [&](const auto& live) { send_notify(live, recipient_id); });
  if (verdict == ReplayOrder::Live::kOverflow) {
    context_.metrics.send_queue_overflow();
    close_slow_consumer("live notifies held behind a replay");
  }
}

bool Connection::send(OutgoingFrame frame) {
  switch (queue_.push(std::move(frame))) {
    case SendQueue::Push::kQueued:
      return true;
    case SendQueue::Push::kStartWriter:
      start_writer();
      return true;
    case SendQueue::Push::kOverflow: {
      context_.metrics.send_queue_overflow();
      const auto& limits = queue_.limits();
      const SendQueueTotal& total = context_.send_queue_total;
      close_slow_consumer(
          std::to_string(queue_.frames()) + " frames, " +
          std::to_string(queue_.bytes()) + " bytes queued; limits " +
          std::to_string(limits.max_frames) + " frames, " +
          std::to_string(limits.max_bytes) + " bytes; all connections " +
          std::to_string(total.bytes.load()) + " bytes queued, limit " +
          std::to_string(total.limit));
      return false;
    }
    case SendQueue::Push::kClosed:
      return false;
  }
  return false;
}

void Connection::shut_down() {
  shutting_down_ = true;
  maybe_finish_shutdown();
}

void Connection::maybe_finish_shutdown() {
  if (shutting_down_ && in_flight_.load() == 0 && queue_.idle()) {
    close(kCloseGoingAway, "server shutting down");
  }
}

void Connection::on_open() {
  context_.metrics.connection_opened();
  context_.connections.add(id_, weak_from_this());
}

void Connection::on_writer_idle() {
  if (shutting_down_) maybe_finish_shutdown();
}

void Connection::on_closed(std::string_view why) {
  if (closed_.exchange(true)) return;
  queue_.close();
  context_.bindings.unbind_all(*this);
  context_.connections.remove(id_);
  context_.metrics.connection_closed();
  if (!why.empty()) log("closed: " + std::string(why));
}

void Connection::log(std::string_view what) const {
  std::cerr << "parley serve: connection " << id_ << " (" << peer_
            << "): " << what << '\n';
}

void Connection::on_message(std::string_view text) {
  if (auto hot = decode_hot_frame(text)) {
    if (auto* post = std::get_if<PostRequestFrame>(&*hot)) {
      handle_post(std::move(*post), text.size());
    } else {
      handle_receipt(std::move(std::get<ReceiptFrame>(*hot)));
    }
    return;
  }
  InboundFrame frame = decode_frame(text);
  if (auto* request = std::get_if<RequestFrame>(&frame)) {
    handle_request(std::move(*request), text.size());
  } else if (auto* receipt = std::get_if<ReceiptFrame>(&frame)) {
    handle_receipt(std::move(*receipt));
  } else if (auto* hello = std::get_if<HelloFrame>(&frame)) {
    handle_hello(std::move(*hello));
  } else if (std::holds_alternative<PingFrame>(frame)) {
    send(encode_pong());
  } else if (std::holds_alternative<PongFrame>(frame)) {
    // Nothing: AG2's hub ignores application pongs too.
  } else if (auto* skipped = std::get_if<SkippedFrame>(&frame)) {
    context_.metrics.frame_skipped();
    log("skipped a frame: " + skipped->why);
  } else if (auto* malformed = std::get_if<MalformedFrame>(&frame)) {
    context_.metrics.frame_malformed();
    send(encode_error("protocol_error", malformed->message));
  }
}

namespace {

// An invitee's answer to an invite: a post of an invite ack or reject. A
// drain still takes these, since a create_channel in flight waits for them
// and the drain waits for it.
bool is_invite_answer(std::string_view event_type) {
  return event_type == engine::event_type::kChannelInviteAck ||
         event_type == engine::event_type::kChannelInviteReject;
}

bool answers_an_invite(const RequestFrame& request) {
  if (request.op != "post_envelope") return false;
  const auto envelope = request.params.find("envelope");
  if (envelope == request.params.end() || !envelope->is_object()) return false;
  const auto type = envelope->find("event_type");
  return type != envelope->end() && type->is_string() &&
         is_invite_answer(type->get_ref<const std::string&>());
}

}  // namespace

bool Connection::admit_request(std::string_view request_id, std::string_view op,
                               bool answers_an_invite,
                               Clock::time_point started, std::size_t bytes) {
  if (context_.draining.load() && !answers_an_invite) {
    count_request(op, "error", started);
    send(encode_failure(request_id, "error", "the hub is shutting down"));
    return false;
  }
  ++in_flight_;
  in_flight_bytes_ += bytes;
  context_.request_budget.take(bytes);
  if (auto held = receipts_.take_held(); !held.empty()) {
    write_acks(std::move(held));
  }
  return true;
}

void Connection::answer_failure(std::string_view op,
                                std::string_view request_id,
                                const engine::Error& error,
                                Clock::time_point started, std::size_t bytes) {
  const std::string_view code = engine::wire_code(error.kind);
  count_request(op, code, started);
  send(encode_failure(request_id, code, error.message));
  request_done(bytes);
}

void Connection::handle_request(RequestFrame request, std::size_t bytes) {
  const Clock::time_point started = Clock::now();
  if (!admit_request(request.request_id, request.op, answers_an_invite(request),
                     started, bytes)) {
    return;
  }
  std::string unregistered;  // the agent an unregister names
  if (request.op == "unregister") {
    if (auto id = request.params.find("agent_id");
        id != request.params.end() && id->is_string()) {
      unregistered = id->get<std::string>();
    }
  }
  context_.control_plane.call(
      request.op, request.params, this,
      [self = shared_from_this(), op = request.op,
       request_id = std::move(request.request_id), unregistered, started,
       bytes](engine::Result<nlohmann::json> result) {
        if (!result) {
          return self->answer_failure(op, request_id, result.error(), started,
                                      bytes);
        }
        // register binds its caller; unregister unbinds.
        if (op == "register") {
          if (auto id = result->find("agent_id");
              id != result->end() && id->is_string()) {
            self->context_.bindings.bind(id->get<std::string>(), self);
          }
        } else if (op == "unregister" && !unregistered.empty()) {
          self->context_.bindings.unbind(unregistered);
        }
        self->count_request(op, "ok", started);
        self->send(encode_response(request_id, wire_result(op, *result)));
        self->request_done(bytes);
      });
}

void Connection::handle_post(PostRequestFrame&& post, std::size_t bytes) {
  static constexpr std::string_view kOp = "post_envelope";
  const Clock::time_point started = Clock::now();
  if (!admit_request(post.request_id, kOp,
                     is_invite_answer(post.envelope->event_type), started,
                     bytes)) {
    return;
  }
  context_.control_plane.post_envelope(
      std::move(post.envelope), *this,
      [self = shared_from_this(), request_id = std::move(post.request_id),
       started, bytes](engine::Result<std::string> envelope_id) mutable {
        if (!envelope_id) {
          return self->answer_failure(kOp, request_id, envelope_id.error(),
                                      started, bytes);
        }
        Metrics& metrics = self->context_.metrics;
        metrics.request_done(metrics.posts(), "ok", Clock::now() - started);
        self->send(OutgoingFrame::string_response(std::move(request_id),
                                                  std::move(*envelope_id)));
        self->request_done(bytes);
      });
}

void Connection::count_request(std::string_view op, std::string_view outcome,
                               Clock::time_point started) {
  context_.metrics.request_done(op, outcome, Clock::now() - started);
}

bool Connection::below_own_limits() const {
  const ConnectionOptions& options = context_.options;
  return static_cast<std::size_t>(in_flight_.load()) <
             options.max_requests_in_flight &&
         in_flight_bytes_.load() < options.max_request_bytes_in_flight;
}

// A connection with nothing in flight holds none of the server's budget
// and is read even when it is spent: the acks that the requests holding it
// may wait for (a create_channel's) still arrive.
bool Connection::budget_allows() const {
  return in_flight_.load() == 0 || !context_.request_budget.spent();
}

bool Connection::may_read() {
  if (below_own_limits() && budget_allows()) return true;
  read_paused_.store(true);
  if (!budget_allows()) {
    context_.request_budget.wait([weak = weak_from_this()] {
      if (auto self = weak.lock()) self->resume_if_paused();
    });
  }
  // Sequentially consistent with request_done() and the budget's release:
  // they count down, then look at the mark (or the budget's waiters); this
  // marks (and waits), then looks at the counts.
  return below_own_limits() && budget_allows() && read_paused_.exchange(false);
}

void Connection::request_done(std::size_t bytes) {
  --in_flight_;
  in_flight_bytes_ -= bytes;
  // May resume this connection (as a waiter) or others.
  context_.request_budget.release(bytes);
  resume_if_paused();
  if (shutting_down_) maybe_finish_shutdown();
}

// A connection paused for the server's budget, not its own limits, that is
// resumed while the budget is still spent reads once more and pauses again.
void Connection::resume_if_paused() {
  if (below_own_limits() && read_paused_.load() &&
      read_paused_.exchange(false)) {
    resume_reading();
  }
}

void Connection::handle_receipt(ReceiptFrame&& receipt) {
  // A receipt for an agent this connection does not hold cannot move its
  // cursor (wire authorization: a request acts only for agents bound to
  // its connection); one naming nobody is ignored, as AG2 does.
  if (receipt.recipient_id.empty() || !holds(receipt.recipient_id)) {
    context_.metrics.receipt_dropped();
    return;
  }
  // Only an ack moves a cursor; the hub ignores every other status.
  if (receipt.status != "ack") return;
  write_acks(receipts_.add({std::move(receipt.recipient_id),
                            std::move(receipt.channel_id),
                            std::move(receipt.envelope_id)}));
}

void Connection::write_acks(std::vector<ReceiptAck> batch) {
  if (batch.empty()) return;
  auto unwritten = std::make_shared<std::atomic<std::size_t>>(batch.size());
  for (const ReceiptAck& ack : batch) {
    context_.hub.acknowledge(
        ack.recipient_id, ack.channel_id, ack.envelope_id, "ack",
        [self = shared_from_this(), unwritten](engine::Result<void> acked) {
          if (!acked) {
            self->log("receipt not recorded: " + acked.error().message);
          }
          if (--*unwritten == 0) self->write_acks(self->receipts_.batch_done());
        });
  }
}

engine::Result<std::string> Connection::admit(const HelloFrame& hello) const {
  engine::Hub& hub = context_.hub;
  if (auto id = hub.find_agent_id(hello.name)) {
    auto remote = engine::admit_remote_agent_hello(hub, *this, *id);
    if (!remote) return std::unexpected(remote.error());
    if (*remote) return *id;
  }
  return hub.authenticate(hello.name, hello.auth_scheme, hello.auth_claim);
}

void Connection::handle_hello(HelloFrame hello) {
  engine::Hub& hub = context_.hub;
  auto admitted = admit(hello);
  if (!admitted) {
    send(encode_error(engine::wire_code(admitted.error().kind),
                      admitted.error().message));
    return;
  }
  const std::string& agent_id = *admitted;
  const bool replays = hello.since_envelope_id.has_value();
  // Live notifies wait from the bind until the replay is queued.
  if (replays) replay_order_.begin(agent_id);
  // The welcome is queued before any delivery to the agent can be.
  context_.bindings.bind(agent_id, shared_from_this(), [&] {
    send(encode_welcome(endpoint_id_,
                        engine::format_timestamp(hub.clock().now())));
  });
  if (!replays) return;
  auto missed = hub.replay_for(agent_id, *hello.since_envelope_id);
  if (!missed) {
    log("replay for " + agent_id + " failed: " + missed.error().message);
    replay_order_.end(agent_id, {},
                      [&](const auto& held) { send_notify(held, agent_id); });
    return;
  }
  send_replay(std::make_shared<Replay>(
      Replay{.agent_id = agent_id, .envelopes = std::move(*missed)}));
}

void Connection::send_replay(std::shared_ptr<Replay> replay) {
  const SendQueueLimits& limits = queue_.limits();
  while (replay->next < replay->envelopes.size()) {
    // A long replay waits for the client to read rather than overflow.
    const bool room = queue_.when_below(
        limits.max_frames / 2, limits.max_bytes / 2,
        [self = shared_from_this(), replay] { self->send_replay(replay); });
    if (!room) return;
    if (!send(encode_notify(replay->envelopes[replay->next++],
                            replay->agent_id))) {
      return;
    }
    context_.metrics.notify_sent();
  }
  replay_order_.end(replay->agent_id, replay->envelopes, [&](const auto& held) {
    send_notify(held, replay->agent_id);
  });
}

}  // namespace parley::transport
