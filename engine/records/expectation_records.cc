#include "engine/records/expectation_records.h"

#include "parley/schemas/log_generated.h"
#include "schemas/record_builder.h"

namespace parley::engine {

std::string expectation_fired_record(const ExpectationFiring& firing) {
  flatbuffers::FlatBufferBuilder builder;
  auto channel_id = builder.CreateString(firing.channel_id);
  auto violator = builder.CreateString(firing.violator);
  auto at = builder.CreateString(firing.at);
  auto expectation = builder.CreateString(firing.expectation);
  auto on_violation = builder.CreateString(firing.on_violation);
  auto body = schema::CreateExpectationFired(
      builder, channel_id, firing.index, violator, at, expectation,
      on_violation, firing.hides_violator);
  return schema::finish_record(builder, schema::Body::ExpectationFired,
                               body.Union());
}

}  // namespace parley::engine
