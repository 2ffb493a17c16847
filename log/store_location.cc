#include "log/store_location.h"

namespace parley::log {

bool is_postgres_location(std::string_view location) {
  return location.starts_with("postgresql://") ||
         location.starts_with("postgres://");
}

std::string redact_location(std::string_view location) {
  if (!is_postgres_location(location)) return std::string(location);
  std::string out(location);
  // userinfo: scheme://user:password@host…
  const std::size_t authority = out.find("://") + 3;
  const std::size_t authority_end = out.find_first_of("/?", authority);
  const std::size_t at = out.rfind('@', authority_end);
  if (at != std::string::npos && at >= authority) {
    const std::size_t colon = out.find(':', authority);
    if (colon != std::string::npos && colon < at) {
      out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // query: …?password=secret&…
  const std::size_t query = out.find('?');
  if (query != std::string::npos) {
    std::size_t at_param = query + 1;
    while (at_param < out.size()) {
      std::size_t end = out.find('&', at_param);
      if (end == std::string::npos) end = out.size();
      constexpr std::string_view kPassword = "password=";
      if (std::string_view(out).substr(at_param).starts_with(kPassword)) {
        const std::size_t value = at_param + kPassword.size();
        out.replace(value, end - value, "***");
        end = value + 3;
      }
      at_param = end + 1;
    }
  }
  return out;
}

}  // namespace parley::log
