#include "engine/client/error.h"

namespace parley::client {

bool Error::from_hub() const {
  return code == code::kNotFound || code == code::kAccessDenied ||
         code == code::kProtocol || code == code::kAuthFailed ||
         code == code::kError;
}

Error from_engine(const engine::Error& error) {
  return Error{std::string(engine::wire_code(error.kind)), error.message};
}

}  // namespace parley::client
