#include "engine/hub/commit.h"

#include "engine/records/log_records.h"

namespace parley::engine {

void Commit::add_envelope(Envelope envelope, bool hub_authored, bool deliver) {
  auto shared = std::make_shared<Envelope>(std::move(envelope));
  entries.push_back(
      {envelope_record(*shared, hub_authored), shared->channel_id});
  envelopes.push_back({entries.size() - 1, std::move(shared), deliver});
}

}  // namespace parley::engine
