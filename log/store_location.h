// Where a store lives, as the user names it: one string for every command.
//
//   postgresql://…  or  postgres://…   a PostgreSQL database (a libpq
//                                       connection URI)
//   anything else                      a RocksDB store's directory
//
// Pure string functions: nothing here opens or touches a store.
#pragma once

#include <string>
#include <string_view>

namespace parley::log {

// Whether `location` names a PostgreSQL database (a connection URI).
bool is_postgres_location(std::string_view location);

// `location` safe to print: a password in a connection URI (the userinfo's
// `user:password@` or a `password=` query parameter) is replaced by "***".
// A directory is returned as it is.
std::string redact_location(std::string_view location);

}  // namespace parley::log
