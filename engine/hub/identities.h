// The agents' side of the hub: registration, unregistration, resumes,
// skills, rules, observations, cursors (receipts), turn failures and
// tenant audit records. Each change is built here and run by the Committer;
// its stage function validates against the folded registry and stages the
// record with its audit record as one batch.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/error.h"
#include "engine/hub/commit.h"
#include "engine/hub/delivery.h"
#include "engine/hub/hub_core.h"
#include "engine/hub/state_reads.h"
#include "engine/registry/identity.h"

namespace parley::engine {

class Identities {
 public:
  Identities(HubCore& core, const StateReads& reads, Delivery& delivery)
      : core_(core), reads_(reads), delivery_(delivery) {}

  // `owners`: only for a remote_agent registered over the wire.
  Change<Passport> register_identity(Passport passport, Resume resume,
                                     std::optional<std::string> skill_md,
                                     std::optional<Rule> rule,
                                     std::vector<std::string> owners);
  Change<void> unregister(std::string agent_id);
  Change<void> set_resume(std::string agent_id, Resume resume);
  Change<void> set_skill(std::string agent_id,
                         std::optional<std::string> skill_md);
  Change<void> set_rule(std::string agent_id, Rule rule);
  Change<void> record_observation(std::string owner_id, std::string capability,
                                  std::string outcome,
                                  std::optional<double> latency_ms,
                                  std::optional<std::string> task_id);
  // A receipt: an "ack" moves the recipient's cursor in the channel to
  // `envelope_id` when that is greater; anything else changes nothing.
  Change<void> acknowledge(std::string recipient_id, std::string channel_id,
                           std::string envelope_id, std::string status);
  Change<void> report_turn_failure(std::string channel_id, std::string agent_id,
                                   std::string envelope_id,
                                   std::string message);
  Change<void> append_audit(std::string json_object);

  // A Hello's admission: see Hub::authenticate.
  Result<std::string> authenticate(std::string_view name,
                                   std::string_view scheme,
                                   std::string_view claim_json) const;

  // Stages an observation onto `resume` (the owner's current resume,
  // updated in place) with its audit record. Writer lock held.
  void stage_observation(Commit& batch, std::string_view owner_id,
                         Resume& resume, std::string_view capability,
                         std::string_view outcome,
                         std::optional<double> latency_ms,
                         const std::optional<std::string>& task_id) const;

 private:
  HubCore& core_;
  const StateReads& reads_;
  Delivery& delivery_;
};

// A change refused before it runs.
template <typename T>
Change<T> refused(Error error) {
  return {[error = std::move(error)](Commit&) -> Result<T> {
    return std::unexpected(error);
  }};
}

}  // namespace parley::engine
