// A check the FlatBuffers Verifier should make and, in flatbuffers 2.0.8
// (Debian 12), does not: that every key of a FlexBuffer ends within the
// buffer. Its flexbuffers::Verifier::VerifyKey returns at the first
// non-zero byte instead of the terminating zero, so a key missing its NUL
// passes, and reading it (AsKey, a map lookup) runs past the record.
#pragma once

namespace parley::schema {

struct Record;

// Every key (map keys, key values, vectors of keys) of every FlexBuffer
// field of `record` has its terminating NUL inside that field's bytes, and
// no field holds a vector of the deprecated string type (never written).
// `record` must have passed the FlatBuffers Verifier.
bool flex_keys_terminated(const Record& record);

}  // namespace parley::schema
