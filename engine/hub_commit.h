// Internal to the hub: one atomic batch of records being assembled by a
// mutation, and the deliveries it leads to. Not part of the public API.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/envelope.h"
#include "engine/hub.h"
#include "log/log_store.h"

namespace parley::engine {

struct Hub::Delivery {
  std::string recipient_id;
  std::shared_ptr<const Envelope> envelope;
  bool substantive = false;
};

struct Hub::Commit {
  struct StagedEnvelope {
    std::size_t entry;  // index into entries
    std::shared_ptr<Envelope> envelope;
    bool deliver = true;  // false for acks and rejects (spec §4.7 step 10)
  };

  std::vector<log::AppendEntry> entries;
  std::vector<StagedEnvelope> envelopes;
  std::vector<Delivery> deliveries;  // filled by Hub::commit
  // What to tell the listeners once the batch is durable, in order.
  std::vector<std::function<void(HubListener&)>> events;

  void add(std::string record) { entries.push_back({std::move(record)}); }
  void add_envelope(Envelope envelope, bool hub_authored, bool deliver);
  bool empty() const { return entries.empty(); }
};

}  // namespace parley::engine
