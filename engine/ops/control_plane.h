// The transport-free control plane (spec §11.5): AG2's named operations,
// JSON params in, JSON results out in AG2's exact shapes and error codes.
// The WebSocket server, `parley exec` and tests all call through here.
//
// Thread safety: as the Hub's; one ControlPlane may serve many threads.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/error.h"
#include "engine/hub.h"

namespace parley::engine {

class ControlPlane {
 public:
  // `hub` must outlive the control plane.
  explicit ControlPlane(Hub& hub) : hub_(hub) {}

  // Runs `op` with `params` (a JSON object). An unknown op fails with
  // protocol_error "unknown control-plane op: '<op>'"; a missing param,
  // a param of the wrong type or an unexpected param with kInvalid naming
  // it; nothing is written then.
  Result<nlohmann::json> call(std::string_view op,
                              const nlohmann::json& params);

 private:
  Hub& hub_;
};

}  // namespace parley::engine
