// `parley serve`'s configuration: what the flags and the optional TOML
// file set, its validation (the rules an operator must not get wrong:
// unauthenticated or clear-text credentials on a public address), and the
// effective configuration as printed at start. API keys are never printed.
//
// TOML file (every key optional; flags override it):
//   data = "/var/lib/parley"            listen = "127.0.0.1:8765"
//   admin = "127.0.0.1:8766"            standby = false
//   [tls]      cert = "server.pem"  key = "server.key"
//   [auth]     schemes = ["none", "api_key"]
//              allow_unauthenticated = false  allow_insecure = false
//              allow_remote_agent_registration = false
//   [auth.api_keys]  alice = "secret"          (agent name = key)
//   [limits]   max_frame_bytes = 4194304  max_connections = 512 (unset: auto)
//              max_requests_in_flight = 1024
//              max_request_bytes_in_flight = 16777216
//              max_total_request_bytes_in_flight = 268435456
//              send_queue_frames = 16384  send_queue_bytes = 33554432
//              total_send_queue_bytes = 1073741824
//   [keepalive]  ping_interval = 20.0  ping_timeout = 20.0   (seconds)
//   [threads]  io = 2
//   [log]      memtable_bytes = 0            (0: RocksDB's 64 MiB)
//              lease_timeout = 3.0           (seconds; PostgreSQL)
//   [timing]   ttl_sweep_interval = 30.0  expectation_sweep_interval = 10.0
//              invite_ack_timeout = 30.0  drain_timeout = 10.0
//              handshake_timeout = 10.0
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/error.h"
#include "engine/transport/server_context.h"

namespace parley::transport {

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};

// "HOST:PORT", "[IPv6]:PORT"; port 0 asks for any free port.
engine::Result<HostPort> parse_host_port(std::string_view text);
std::string to_string(const HostPort& address);
// Whether `host` is a loopback address or "localhost". A host name other
// than localhost counts as not loopback.
bool is_loopback(std::string_view host);

// A duration setting given in seconds (a flag or the file's number): a
// finite number from 0 to kMaxSettingSeconds, rounded to the millisecond;
// nullopt for anything else (a negative, NaN, infinity, or one so large it
// can only be a typo).
inline constexpr double kMaxSettingSeconds = 1e9;  // ~31 years
inline constexpr std::string_view kSecondsRule =
    "a number of seconds from 0 to 1e9";
std::optional<std::chrono::milliseconds> seconds_setting(double seconds);
// I/O threads a server may run; more is a typo, not a machine.
inline constexpr std::size_t kMaxIoThreads = 1024;

struct ServerConfig {
  std::filesystem::path data;  // the RocksDB store's directory
  HostPort listen{"127.0.0.1", 8765};
  std::optional<HostPort> admin;  // the admin HTTP port; none by default
  std::optional<std::filesystem::path> tls_cert;
  std::optional<std::filesystem::path> tls_key;
  // Registration and hello schemes: "none" and/or "api_key".
  std::vector<std::string> auth_schemes{"none"};
  std::map<std::string, std::string, std::less<>> api_keys;  // name -> key
  bool allow_unauthenticated = false;  // "none" on a non-loopback address
  bool allow_insecure = false;         // "api_key" without TLS, non-loopback
  // Lets a connection register kind "remote_agent" identities, owned by
  // the agents it holds.
  bool allow_remote_agent_registration = false;
  ConnectionOptions connection;
  // Client sockets open at once (socket_slots.h); beyond it a new
  // connection is closed at once. 0: automatic, half the process's
  // open-file limit (effective_max_connections).
  std::size_t max_connections = 0;
  std::size_t io_threads = 2;
  // Bytes a RocksDB memtable holds before it is flushed (each of the
  // store's column families has one, and up to two while one flushes);
  // 0: RocksDB's default, 64 MiB. Bounds the log's share of memory.
  std::size_t memtable_bytes = 0;
  // Follow the store another hub writes and take it over once that hub is
  // gone (`parley serve --standby`); serve nothing until then.
  bool standby = false;
  // PostgreSQL: how long the writer's lease lasts unrenewed, i.e. how long
  // a standby waits for a writer that went silent (log/postgres_lease.h).
  std::chrono::milliseconds lease_timeout{3000};
  std::chrono::milliseconds ttl_sweep_interval{30000};
  std::chrono::milliseconds expectation_sweep_interval{10000};
  std::chrono::milliseconds invite_ack_timeout{30000};
  // How long a shutdown waits for requests in flight before it fails the
  // ones still waiting (create_channel waiting for acks).
  std::chrono::milliseconds drain_timeout{10000};

  bool tls() const { return tls_cert.has_value(); }
};

// Reads the TOML `file` into `config`; keys it does not set keep their
// value. An unknown key, a value of the wrong type or out of range fails
// with a message naming the file and the key.
engine::Result<void> load_config_file(const std::filesystem::path& file,
                                      ServerConfig& config);

// The rules a configuration must meet to be served: a data directory; TLS
// certificate and key both or neither, loading as a matching pair; known
// schemes; keys for api_key; "none" on a non-loopback address only with
// allow_unauthenticated; "api_key" on a non-loopback address without TLS
// only with allow_insecure; positive sizes and limits; 1 to kMaxIoThreads I/O
// threads; a lease of at least 0.3 s.
engine::Result<void> validate(const ServerConfig& config);

// max_connections, or for 0 half the process's open-file limit as it is
// now (at least 1): the other half stays for the log's files, the admin
// port and the rest of the process.
std::size_t effective_max_connections(const ServerConfig& config);

// The effective configuration, one "key = value" line each; api keys by
// agent name only.
std::string describe(const ServerConfig& config);

}  // namespace parley::transport
