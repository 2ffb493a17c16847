#include "engine/hub/commit.h"

#include "engine/records/log_records.h"

namespace parley::engine {

void Commit::add_envelope(Envelope envelope, bool hub_authored, bool deliver) {
  add_envelope(std::make_shared<Envelope>(std::move(envelope)), hub_authored,
               deliver);
}

void Commit::add_envelope(std::shared_ptr<Envelope> envelope, bool hub_authored,
                          bool deliver) {
  // Appended as soon as the change is staged: the log stamps the checksum
  // with the sequences.
  entries.push_back(
      {.record = envelope_record(*envelope, hub_authored,
                                 schema::ChecksumStamp::kWithSequences),
       .channel = envelope->channel_id,
       .freshly_built = true});
  envelopes.push_back({entries.size() - 1, std::move(envelope), deliver});
}

}  // namespace parley::engine
