// THE INTERIM SEAM between the wire and the hub's blocking API.
//
// The hub answers a mutation only once it is durable (and create_channel
// only once every invitee acked), by blocking its calling thread. Until
// the hub has an asynchronous entry point (a completion per request), the
// server runs every hub call that may block here, on small fixed thread
// pools, and each completion posts its answer back to the connection's
// strand; no thread is ever created per connection or per request. When
// the asynchronous entry point lands, this file is what changes.
//
// Two pools, so that acks can always run: create_channel waits for the
// invitees' acks, which arrive as post_envelope requests (possibly on the
// same connection, spec §11.8), so create_channel runs on a pool of its
// own and can never occupy every thread the acks need.
//
// call_op() is the one place the server calls ControlPlane::call.
//
// Thread safety: every member is safe from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/base/error.h"

namespace parley::engine {
class Caller;
class ControlPlane;
}  // namespace parley::engine

namespace parley::transport {

struct RequestRunnerOptions {
  std::size_t threads = 16;                // every request but one kind
  std::size_t create_channel_threads = 8;  // create_channel only
};

class RequestRunner {
 public:
  using Completion = std::function<void(engine::Result<nlohmann::json>)>;

  // `control_plane` must outlive the runner.
  RequestRunner(engine::ControlPlane& control_plane,
                RequestRunnerOptions options);
  RequestRunner(const RequestRunner&) = delete;
  RequestRunner& operator=(const RequestRunner&) = delete;
  ~RequestRunner();  // join()

  // Runs `op` on a pool thread as `caller`'s request; `done` runs on that
  // thread with the result. `caller` must stay valid until `done` returns.
  void run(std::string op, nlohmann::json params, const engine::Caller& caller,
           Completion done);

  // Runs other hub work that may block (receipts, hello) on a pool thread.
  void post(std::function<void()> work);

  // Waits for every queued and running job, then stops the pools.
  // Idempotent.
  void join();

 private:
  struct Pools;
  engine::ControlPlane& control_plane_;
  std::unique_ptr<Pools> pools_;
};

// Runs one control-plane op for `caller`'s connection.
engine::Result<nlohmann::json> call_op(engine::ControlPlane& control_plane,
                                       std::string_view op,
                                       const nlohmann::json& params,
                                       const engine::Caller& caller);

}  // namespace parley::transport
