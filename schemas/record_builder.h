// Building records of any kind. Includes the generated FlatBuffers code, so
// only the .cc files that build records include it.
#pragma once

#include <string>

#include "parley/schemas/log_generated.h"
#include "schemas/record.h"

namespace parley::schema {

// Finishes `builder` as a Record of schema kSchemaVersion around `body` (of
// kind `type`), with zero sequences that LogStore::append stamps in place
// and, unless `stamp` leaves it to the append, the checksum over them, so
// that the record, stored or not, passes verify_record.
std::string finish_record(flatbuffers::FlatBufferBuilder& builder, Body type,
                          flatbuffers::Offset<void> body,
                          ChecksumStamp stamp = ChecksumStamp::kNow);

}  // namespace parley::schema
