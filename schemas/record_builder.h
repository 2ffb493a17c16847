// Building records of any kind. Includes the generated FlatBuffers code, so
// only the .cc files that build records include it.
#pragma once

#include <string>

#include "parley/schemas/log_generated.h"

namespace parley::schema {

// Finishes `builder` as a Record around `body` (of kind `type`), with zero
// sequences that LogStore::append stamps in place.
std::string finish_record(flatbuffers::FlatBufferBuilder& builder, Body type,
                          flatbuffers::Offset<void> body);

}  // namespace parley::schema
