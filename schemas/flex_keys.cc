#include "schemas/flex_keys.h"

#include <flatbuffers/flexbuffers.h>

#include <cstring>

#include "parley/schemas/log_generated.h"

namespace parley::schema {
namespace {

using Field = flatbuffers::Vector<std::uint8_t>;

struct Bounds {
  const std::uint8_t* begin;
  const std::uint8_t* end;

  bool key_ends(const char* key) const {
    const auto* at = reinterpret_cast<const std::uint8_t*>(key);
    return at >= begin && at < end &&
           std::memchr(at, 0, static_cast<std::size_t>(end - at)) != nullptr;
  }
};

// The Verifier bounds nesting (64 levels), so recursion is bounded too.
bool keys_end(flexbuffers::Reference ref, const Bounds& bounds) {
  switch (ref.GetType()) {
    case flexbuffers::FBT_KEY:
      return bounds.key_ends(ref.AsKey());
    case flexbuffers::FBT_MAP: {
      const flexbuffers::Map map = ref.AsMap();
      const flexbuffers::TypedVector keys = map.Keys();
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (!bounds.key_ends(keys[i].AsKey())) return false;
      }
      const flexbuffers::Vector values = map.Values();
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (!keys_end(values[i], bounds)) return false;
      }
      return true;
    }
    case flexbuffers::FBT_VECTOR: {
      const flexbuffers::Vector vector = ref.AsVector();
      for (std::size_t i = 0; i < vector.size(); ++i) {
        if (!keys_end(vector[i], bounds)) return false;
      }
      return true;
    }
    case flexbuffers::FBT_VECTOR_STRING_DEPRECATED:
      // Never written (to_flex writes untyped vectors); its elements read
      // as length-prefixed strings the Verifier checks as keys.
      return false;
    case flexbuffers::FBT_VECTOR_KEY: {
      const flexbuffers::TypedVector vector = ref.AsTypedVector();
      for (std::size_t i = 0; i < vector.size(); ++i) {
        if (!bounds.key_ends(vector[i].AsKey())) return false;
      }
      return true;
    }
    default:
      return true;
  }
}

bool field_ok(const Field* field) {
  if (field == nullptr || field->size() == 0) return true;
  const Bounds bounds{field->data(), field->data() + field->size()};
  return keys_end(flexbuffers::GetRoot(field->data(), field->size()), bounds);
}

}  // namespace

bool flex_keys_terminated(const Record& record) {
  switch (record.body_type()) {
    case Body::Envelope:
      return field_ok(record.body_as_Envelope()->event_data());
    case Body::ChannelCreated:
      return field_ok(record.body_as_ChannelCreated()->metadata());
    case Body::AgentRegistered: {
      const auto* body = record.body_as_AgentRegistered();
      return field_ok(body->passport()) && field_ok(body->resume()) &&
             field_ok(body->rule());
    }
    case Body::AgentUpdated:
      return field_ok(record.body_as_AgentUpdated()->value());
    case Body::TaskUpdated:
      return field_ok(record.body_as_TaskUpdated()->metadata());
    case Body::TaskCheckpointed:
      return field_ok(record.body_as_TaskCheckpointed()->state());
    case Body::AuditRecorded:
      return field_ok(record.body_as_AuditRecorded()->record());
    case Body::ResumeSet:
      return field_ok(record.body_as_ResumeSet()->resume());
    case Body::RuleSet:
      return field_ok(record.body_as_RuleSet()->rule());
    case Body::ObservationRecorded:
      return field_ok(record.body_as_ObservationRecorded()->resume());
    default:
      return true;  // no FlexBuffer field
  }
}

}  // namespace parley::schema
