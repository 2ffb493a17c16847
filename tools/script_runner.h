// Runs `parley exec` scripts: JSON lines of control-plane ops plus the script's
// own ops (invitee, clock.set, clock.advance, sweep, restart, state), against
// an embedded hub with a manual clock. One JSON output line per op, in AG2's
// response shape.
//
// Thread safety: none; one script at a time.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "engine/base/clock.h"
#include "engine/hub/hub.h"
#include "engine/ops/control_plane.h"
#include "log/log_store.h"

namespace parley::engine {

// Opens the script's store, anew at start and at every `restart`.
using StoreOpener = std::function<Result<std::shared_ptr<log::LogStore>>()>;

class ScriptRunner {
 public:
  // Opens the hub. The clock starts at 2026-01-01T00:00:00+00:00.
  static Result<std::unique_ptr<ScriptRunner>> start(StoreOpener open_store);

  ScriptRunner(const ScriptRunner&) = delete;
  ScriptRunner& operator=(const ScriptRunner&) = delete;
  ~ScriptRunner();

  // The output line for one script line (no newline), or nullopt for a
  // blank line or a "#" comment. Never throws on bad input: a malformed
  // line gets an error line.
  std::optional<std::string> run_line(std::string_view line);

  // The hub the script runs on; null after a restart that failed to open
  // it. Valid until the next run_line.
  const Hub* hub() const { return hub_.get(); }

 private:
  enum class InviteMode { kAck, kReject, kSilent };

  explicit ScriptRunner(StoreOpener open_store);
  Result<void> open_hub();
  Result<nlohmann::json> run(std::string_view op, const nlohmann::json& params);
  Result<nlohmann::json> run_script_op(std::string_view op,
                                       const nlohmann::json& params);
  void bind_agent(const std::string& agent_id);
  void answer_invite(const std::string& invitee, const Envelope& invite);
  // Replaces every string "$NAME" in `value` that names a binding.
  void substitute(nlohmann::json& value) const;

  StoreOpener open_store_;
  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<Hub> hub_;
  std::unique_ptr<ControlPlane> control_plane_;
  std::map<std::string, std::string, std::less<>> bindings_;  // $NAME -> id
  std::map<std::string, InviteMode, std::less<>> invite_modes_;
};

}  // namespace parley::engine
