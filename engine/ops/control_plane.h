// The transport-free control plane: AG2's named operations, JSON params in,
// JSON results out in AG2's exact shapes and error codes. The WebSocket server,
// `parley exec` and tests all call through here.
//
// Thread safety: as the Hub's; one ControlPlane may serve many threads.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/error.h"
#include "engine/hub/hub.h"
#include "engine/ops/answer.h"
#include "engine/ops/authorization.h"
#include "engine/ops/caller.h"

namespace parley::engine {

class ControlPlane {
 public:
  // `hub` must outlive the control plane.
  explicit ControlPlane(Hub& hub, WireOptions options = {})
      : hub_(hub), options_(options) {}

  // Runs `op` with `params` (a JSON object). An unknown op fails with
  // protocol_error "unknown control-plane op: '<op>'"; a missing param,
  // a param of the wrong type or an unexpected param with kInvalid naming
  // it; nothing is written then.
  //
  // `caller`: null for an in-process caller (parley exec, tests,
  // embedders), which is not checked. A wire request passes the Caller of
  // its connection: the op is authorized against the agents bound to it
  // before the hub runs it (engine/ops/authorization.h), and a denial
  // writes nothing. The Caller must stay valid for the call.
  //
  // A mutation blocks the calling thread until it is durable (and
  // create_channel until every invitee acked); its deliveries run on the
  // calling thread, so a subscriber may call back into the hub.
  Result<nlohmann::json> call(std::string_view op, const nlohmann::json& params,
                              const Caller* caller = nullptr);

  // The same without blocking, for a server: a read or a refusal is told to
  // `reply` at once, on the calling thread; a mutation's outcome on one of
  // the hub's threads once durable (Dispatch::kAsync in engine/hub/hub.h),
  // so `reply` must not block. Only the call itself needs `caller`.
  void call(std::string_view op, const nlohmann::json& params,
            const Caller* caller, op_layer::Reply reply);

  // post_envelope over the wire with its envelope already parsed (the
  // server's hot path): authorized against `caller` as call() would, then
  // posted without blocking; `done` is told the envelope id, or the error
  // call() would give, as call() tells its reply. `envelope` is not null.
  void post_envelope(std::shared_ptr<Envelope> envelope, const Caller& caller,
                     Done<std::string> done);

  // Every op name, sorted.
  static std::vector<std::string> op_names();

 private:
  // Finds, checks and authorizes `op`, and answers it or returns the
  // mutation to start.
  Result<op_layer::Answer> prepare(std::string_view op,
                                   const nlohmann::json& params,
                                   const Caller* caller);

  // The caller's bound agents, read once: sorted, unique.
  WireRequest wire_request(const Caller& caller) const;

  Hub& hub_;
  const WireOptions options_;
};

}  // namespace parley::engine
