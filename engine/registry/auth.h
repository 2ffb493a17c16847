// Authentication schemes for registration (checked first, except for a
// remote_agent) and for a Hello's re-attach: an adapter per scheme name
// validates the passport's `auth.claim`. Every refusal is
// ErrorKind::kAuthFailed (wire code "auth_failed").
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/error.h"
#include "engine/registry/identity.h"

namespace parley::engine {

inline constexpr std::string_view kNoAuthScheme = "none";
inline constexpr std::string_view kApiKeyScheme = "api_key";

// One authentication scheme. Implementations are immutable after
// construction, so `validate` may run on any thread concurrently.
class AuthAdapter {
 public:
  virtual ~AuthAdapter() = default;

  // Accepts `claim_json` (compact JSON text of the claim object) as proof
  // for `passport`, or refuses it with kAuthFailed.
  virtual Result<void> validate(const Passport& passport,
                                std::string_view claim_json) const = 0;
};

// Scheme "none": accepts every claim.
class NoAuth final : public AuthAdapter {
 public:
  Result<void> validate(const Passport& passport,
                        std::string_view claim_json) const override;
};

// Scheme "api_key": the claim must hold a non-empty string `token` equal
// (compared in constant time for equal lengths) to the key registered for
// the passport's name, looked up in the static map first and then through
// the optional resolver. Messages are AG2's:
//   "api_key claim missing required string field 'token'"
//   "no api_key registered for '<name>'"
//   "api_key mismatch for '<name>'"
class ApiKeyAuth final : public AuthAdapter {
 public:
  using KeyMap = std::map<std::string, std::string, std::less<>>;
  // Returns the key for an agent name, or nullopt when it has none. Called
  // on the validating thread; must be thread-safe if validations overlap.
  using Resolver =
      std::function<std::optional<std::string>(std::string_view name)>;

  explicit ApiKeyAuth(KeyMap keys, Resolver resolver = {});

  Result<void> validate(const Passport& passport,
                        std::string_view claim_json) const override;

 private:
  KeyMap keys_;
  Resolver resolver_;
};

// The hub's scheme name -> adapter table. Not synchronised: mutate it only
// while no other thread uses it; concurrent const use is safe.
class AuthRegistry {
 public:
  // Holds only "none" (NoAuth), AG2's default registry.
  AuthRegistry();

  // Installs `adapter` under `scheme`, replacing any adapter already there.
  void register_scheme(std::string scheme,
                       std::shared_ptr<const AuthAdapter> adapter);

  // Removes `scheme` (unknown names are ignored): a server that does not
  // accept "none" removes it from the default registry.
  void unregister_scheme(std::string_view scheme);

  // The adapter for `scheme`, or kAuthFailed "unknown auth scheme: '<s>'".
  // The returned adapter stays valid after it is replaced.
  Result<std::shared_ptr<const AuthAdapter>> find(
      std::string_view scheme) const;

  // Registration's auth step: the adapter for `passport.auth.scheme`
  // validates `passport.auth.claim`.
  Result<void> validate(const Passport& passport) const;

  // Registered scheme names, sorted.
  std::vector<std::string> schemes() const;

 private:
  std::map<std::string, std::shared_ptr<const AuthAdapter>, std::less<>>
      adapters_;
};

}  // namespace parley::engine
