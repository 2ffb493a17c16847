// One client connection's side of AG2's protocol, apart from the socket:
// decodes each inbound frame and answers it, keeps the send queue, and is the
// Caller the op layer checks requests against (the agents bound to it, kept in
// the hub-wide BindingTable).
//
// The socket side (plain or TLS WebSocket) derives from it and implements
// start_writer() and close(). Inbound frames arrive on the session's
// strand. No thread ever waits for the hub: requests go to the control
// plane's non-blocking call and are answered from its completion (so a
// pending create_channel does not hold up the frames after it, its acks
// included), receipts likewise; answers and deliveries are queued from any
// thread.
//
// Lifetime: owned by shared_ptr; every pending job holds one. The
// ServerContext must outlive it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/ops/caller.h"
#include "engine/transport/receipt_coalescer.h"
#include "engine/transport/replay_order.h"
#include "engine/transport/send_queue.h"
#include "engine/transport/server_context.h"

namespace parley::transport {

struct HelloFrame;
struct RequestFrame;
struct ReceiptFrame;
struct PostRequestFrame;

// WebSocket close codes the server uses.
inline constexpr std::uint16_t kCloseGoingAway = 1001;
inline constexpr std::uint16_t kClosePolicy = 1008;
inline constexpr std::uint16_t kCloseTooBig = 1009;
inline constexpr std::uint16_t kCloseInternal = 1011;

class Connection : public engine::Caller,
                   public std::enable_shared_from_this<Connection> {
 public:
  Connection(ServerContext& context, std::string peer);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() override = default;

  // engine::Caller: answered from the binding table, any thread.
  bool holds(std::string_view agent_id) const override;
  std::vector<std::string> bound_agents() const override;

  // Queues `frame` to be written. A full queue closes the connection
  // (1008, "send queue full: ..."); false when the frame was not queued.
  // Any thread.
  bool send(OutgoingFrame frame);

  // Queues a live notify of `envelope` to `recipient_id`, bound here,
  // after any replay to that agent under way (see ReplayOrder). Called by
  // the binding table under its lock, which a hello's bind waits for: a
  // notify that found no replay under way is queued before the replay
  // begins. Any thread.
  void deliver(const std::string& recipient_id,
               const std::shared_ptr<const engine::Envelope>& envelope);

  // Graceful end for a server shutdown: later requests are refused, and
  // once every request in flight is answered and written the connection
  // closes with 1001 "server shutting down". Any thread.
  void shut_down();

  // Requests received and not yet answered.
  int in_flight() const { return in_flight_.load(); }
  // Whether the session may read more from its socket: true while fewer
  // than max_requests_in_flight requests of fewer than
  // max_request_bytes_in_flight bytes are in flight, and either none is or
  // the server's RequestBudget is not spent. When false, reading is marked
  // paused, and resume_reading() is called once a request of this connection
  // (or, for the budget, of any) is answered. Exactly one of the two goes on
  // reading: a request answered meanwhile either finds the mark (and
  // resumes) or leaves this returning true. On the strand.
  bool may_read();
  std::uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }

  // Closes the connection with a WebSocket close `code` and `reason`
  // (at most 123 bytes); the socket is torn down if the peer does not
  // answer within the handshake timeout. Idempotent. Any thread.
  virtual void close(std::uint16_t code, std::string reason) = 0;

 protected:
  // Called by the session, on its strand.
  void on_open();
  void on_message(std::string_view text);
  // The session's writer found the queue empty.
  void on_writer_idle();
  // The socket is gone (once): unbinds every agent.
  void on_closed(std::string_view why);

  // Writes queued frames until the queue is empty, then calls
  // on_writer_idle(). Any thread; the writer runs on the strand.
  virtual void start_writer() = 0;
  // Reads the socket again after may_read() paused it. Any thread; the
  // reading runs on the strand.
  virtual void resume_reading() = 0;

  SendQueue& queue() { return queue_; }
  ServerContext& context() { return context_; }

 private:
  // A replay after a hello: `envelopes[next...]` still to send.
  struct Replay {
    std::string agent_id;
    std::vector<engine::Envelope> envelopes;
    std::size_t next = 0;
  };

  void handle_hello(HelloFrame hello);  // on the strand
  // Sends what is left of `replay`, pausing while the send queue is over
  // half full (resumed by the writer), then the live notifies held
  // meanwhile. The strand, then the writer.
  void send_replay(std::shared_ptr<Replay> replay);
  // Queues a notify; false when it was not (the connection is closing).
  bool send_notify(const std::shared_ptr<const engine::Envelope>& envelope,
                   const std::string& recipient_id);
  // Closes the connection because the client does not read fast enough:
  // `queued` says what was waiting for it.
  void close_slow_consumer(std::string_view queued);
  // The agent a hello re-attaches: a remote agent on the strength of an
  // owner this connection holds (never of an auth scheme), any other agent
  // by proving its claim with the scheme it registered with.
  engine::Result<std::string> admit(const HelloFrame& hello) const;
  // On the strand; `bytes`: the frame's size. The two frames of every post
  // (a post and its receipt) are taken by reference and their fields moved
  // out, so the frame itself is not moved again.
  void handle_request(RequestFrame request, std::size_t bytes);
  void handle_post(PostRequestFrame&& post, std::size_t bytes);
  using Clock = std::chrono::steady_clock;
  // The start of every request, decoded at `started`: false (and answered)
  // when a drain refuses it; else counted in flight with its frame's
  // `bytes` until it is answered, and held receipts are written first.
  bool admit_request(std::string_view request_id, std::string_view op,
                     bool answers_an_invite, Clock::time_point started,
                     std::size_t bytes);
  // Answers a failed request of `bytes` (any thread).
  void answer_failure(std::string_view op, std::string_view request_id,
                      const engine::Error& error, Clock::time_point started,
                      std::size_t bytes);
  void handle_receipt(ReceiptFrame&& receipt);  // on the strand
  // Writes `batch` (acks from receipts_); once every ack is written, the
  // next batch receipts_ gives. Any thread.
  void write_acks(std::vector<ReceiptAck> batch);
  // Counts a request decoded at `started` as answered with `outcome`;
  // before its response is queued, so a client that has the response
  // finds it in /metrics. Any thread.
  void count_request(std::string_view op, std::string_view outcome,
                     Clock::time_point started);
  // A request of `bytes` is answered (any thread).
  void request_done(std::size_t bytes);
  // Below max_requests_in_flight and max_request_bytes_in_flight.
  bool below_own_limits() const;
  // Nothing in flight, or the server's RequestBudget not spent.
  bool budget_allows() const;
  // Goes on reading if may_read() paused and this connection is below its
  // own limits: after one of its requests is answered, or the server's
  // RequestBudget is no longer spent (any thread).
  void resume_if_paused();
  void maybe_finish_shutdown();
  void log(std::string_view what) const;

  ServerContext& context_;
  const std::uint64_t id_;
  const std::string peer_;
  const std::string endpoint_id_;
  SendQueue queue_;
  ReplayOrder replay_order_;
  ReceiptCoalescer receipts_;
  std::atomic<int> in_flight_ = 0;
  std::atomic<std::size_t> in_flight_bytes_ = 0;  // their frames' bytes
  // may_read() found a limit reached; taken (exchanged back to false) by
  // whoever resumes.
  std::atomic<bool> read_paused_ = false;
  std::atomic<bool> shutting_down_ = false;
  std::atomic<bool> closed_ = false;
};

}  // namespace parley::transport
