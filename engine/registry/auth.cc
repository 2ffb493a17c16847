#include "engine/registry/auth.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace parley::engine {
namespace {

std::unexpected<Error> auth_failed(std::string message) {
  return fail(ErrorKind::kAuthFailed, std::move(message));
}

// The claim's `token` when it is a non-empty string.
std::optional<std::string> claim_token(std::string_view claim_json) {
  const auto claim = nlohmann::json::parse(claim_json, /*cb=*/nullptr,
                                           /*allow_exceptions=*/false);
  if (!claim.is_object()) return std::nullopt;
  const auto it = claim.find("token");
  if (it == claim.end() || !it->is_string()) return std::nullopt;
  std::string token = it->get<std::string>();
  if (token.empty()) return std::nullopt;
  return token;
}

// Like Python's hmac.compare_digest: the running time depends on the
// lengths only, not on where the strings differ.
bool constant_time_equal(std::string_view presented,
                         std::string_view expected) {
  const bool same_size = presented.size() == expected.size();
  const std::string_view other = same_size ? expected : presented;
  volatile unsigned char diff = same_size ? 0 : 1;
  for (std::size_t i = 0; i < presented.size(); ++i) {
    diff = diff | static_cast<unsigned char>(presented[i] ^ other[i]);
  }
  return diff == 0;
}

}  // namespace

Result<void> NoAuth::validate(const Passport& /*passport*/,
                              std::string_view /*claim_json*/) const {
  return {};
}

ApiKeyAuth::ApiKeyAuth(KeyMap keys, Resolver resolver)
    : keys_(std::move(keys)), resolver_(std::move(resolver)) {}

Result<void> ApiKeyAuth::validate(const Passport& passport,
                                  std::string_view claim_json) const {
  const std::optional<std::string> token = claim_token(claim_json);
  if (!token) {
    return auth_failed("api_key claim missing required string field 'token'");
  }
  std::optional<std::string> expected;
  if (const auto it = keys_.find(passport.name); it != keys_.end()) {
    expected = it->second;
  } else if (resolver_) {
    expected = resolver_(passport.name);
  }
  if (!expected) {
    return auth_failed("no api_key registered for '" + passport.name + "'");
  }
  if (!constant_time_equal(*token, *expected)) {
    return auth_failed("api_key mismatch for '" + passport.name + "'");
  }
  return {};
}

AuthRegistry::AuthRegistry() {
  register_scheme(std::string(kNoAuthScheme), std::make_shared<NoAuth>());
}

void AuthRegistry::register_scheme(std::string scheme,
                                   std::shared_ptr<const AuthAdapter> adapter) {
  adapters_.insert_or_assign(std::move(scheme), std::move(adapter));
}

void AuthRegistry::unregister_scheme(std::string_view scheme) {
  if (auto it = adapters_.find(scheme); it != adapters_.end()) {
    adapters_.erase(it);
  }
}

Result<std::shared_ptr<const AuthAdapter>> AuthRegistry::find(
    std::string_view scheme) const {
  const auto it = adapters_.find(scheme);
  if (it == adapters_.end()) {
    return auth_failed("unknown auth scheme: '" + std::string(scheme) + "'");
  }
  return it->second;
}

Result<void> AuthRegistry::validate(const Passport& passport) const {
  auto adapter = find(passport.auth.scheme);
  if (!adapter) return std::unexpected(std::move(adapter.error()));
  return (*adapter)->validate(passport, passport.auth.claim);
}

std::vector<std::string> AuthRegistry::schemes() const {
  std::vector<std::string> names;
  names.reserve(adapters_.size());
  for (const auto& [name, adapter] : adapters_) names.push_back(name);
  return names;
}

}  // namespace parley::engine
