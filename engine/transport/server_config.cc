#include "engine/transport/server_config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include "engine/transport/open_file_limit.h"
#include "engine/transport/tls_context.h"
#include "log/store_location.h"

namespace parley::transport {
namespace {

using engine::invalid;
using engine::Result;
using std::chrono::milliseconds;

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

std::string seconds_text(milliseconds value) {
  std::ostringstream out;
  out << static_cast<double>(value.count()) / 1000.0 << "s";
  return out.str();
}

// Reads one TOML table strictly: each get_* consumes a key; finish() fails
// on a key nobody asked for.
class TomlTable {
 public:
  TomlTable(const toml::table& table, std::string path, std::string file)
      : table_(table), path_(std::move(path)), file_(std::move(file)) {}

  Result<void> text(std::string_view key, std::string& out) {
    const toml::node* node = take(key);
    if (!node) return {};
    if (!node->is_string()) return wrong(key, "a string");
    out = node->as_string()->get();
    return {};
  }
  Result<void> flag(std::string_view key, bool& out) {
    const toml::node* node = take(key);
    if (!node) return {};
    if (!node->is_boolean()) return wrong(key, "true or false");
    out = node->as_boolean()->get();
    return {};
  }
  Result<void> count(std::string_view key, std::size_t& out) {
    const toml::node* node = take(key);
    if (!node) return {};
    if (!node->is_integer() || node->as_integer()->get() <= 0) {
      return wrong(key, "a positive integer");
    }
    out = static_cast<std::size_t>(node->as_integer()->get());
    return {};
  }
  // Seconds, integer or float (seconds_setting()).
  Result<void> seconds(std::string_view key, milliseconds& out) {
    const toml::node* node = take(key);
    if (!node) return {};
    double value = -1;
    if (node->is_integer())
      value = static_cast<double>(node->as_integer()->get());
    if (node->is_floating_point()) value = node->as_floating_point()->get();
    auto duration = seconds_setting(value);
    if (!duration) return wrong(key, kSecondsRule);
    out = *duration;
    return {};
  }
  Result<void> texts(std::string_view key, std::vector<std::string>& out) {
    const toml::node* node = take(key);
    if (!node) return {};
    const toml::array* array = node->as_array();
    if (!array) return wrong(key, "an array of strings");
    std::vector<std::string> items;
    for (const toml::node& item : *array) {
      if (!item.is_string()) return wrong(key, "an array of strings");
      items.push_back(item.as_string()->get());
    }
    out = std::move(items);
    return {};
  }
  // A sub-table, or nullptr when absent.
  Result<const toml::table*> table(std::string_view key) {
    const toml::node* node = take(key);
    if (!node) return nullptr;
    if (!node->is_table()) return wrong(key, "a table");
    return node->as_table();
  }
  Result<void> finish() const {
    for (const auto& [key, node] : table_) {
      if (!taken_.contains(std::string(key.str()))) {
        return invalid(file_ + ": unknown key '" + qualified(key.str()) + "'");
      }
    }
    return {};
  }
  std::string qualified(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

 private:
  const toml::node* take(std::string_view key) {
    taken_.insert(std::string(key));
    return table_.get(key);
  }
  std::unexpected<engine::Error> wrong(std::string_view key,
                                       std::string_view what) const {
    return invalid(file_ + ": '" + qualified(key) + "' must be " +
                   std::string(what));
  }

  const toml::table& table_;
  std::string path_;
  std::string file_;
  std::set<std::string> taken_;
};

#define PARLEY_CONFIG_CHECK(expression) \
  if (auto done = (expression); !done) return std::unexpected(done.error())

Result<void> read_address(TomlTable& table, std::string_view key,
                          std::optional<HostPort>& out) {
  std::string text;
  PARLEY_CONFIG_CHECK(table.text(key, text));
  if (text.empty()) return {};
  auto parsed = parse_host_port(text);
  if (!parsed) {
    return invalid("'" + table.qualified(key) + "': " + parsed.error().message);
  }
  out = *parsed;
  return {};
}

Result<void> read_file(const toml::table& root, const std::string& file,
                       ServerConfig& config) {
  TomlTable top(root, "", file);
  std::string data;
  PARLEY_CONFIG_CHECK(top.text("data", data));
  if (!data.empty()) config.data = data;
  std::optional<HostPort> listen;
  PARLEY_CONFIG_CHECK(read_address(top, "listen", listen));
  if (listen) config.listen = *listen;
  PARLEY_CONFIG_CHECK(read_address(top, "admin", config.admin));
  PARLEY_CONFIG_CHECK(top.flag("standby", config.standby));

  auto tls_table = top.table("tls");
  if (!tls_table) return std::unexpected(tls_table.error());
  if (*tls_table) {
    TomlTable tls(**tls_table, "tls", file);
    std::string cert, key;
    PARLEY_CONFIG_CHECK(tls.text("cert", cert));
    PARLEY_CONFIG_CHECK(tls.text("key", key));
    PARLEY_CONFIG_CHECK(tls.finish());
    if (!cert.empty()) config.tls_cert = cert;
    if (!key.empty()) config.tls_key = key;
  }

  auto auth_table = top.table("auth");
  if (!auth_table) return std::unexpected(auth_table.error());
  if (*auth_table) {
    TomlTable auth(**auth_table, "auth", file);
    PARLEY_CONFIG_CHECK(auth.texts("schemes", config.auth_schemes));
    PARLEY_CONFIG_CHECK(
        auth.flag("allow_unauthenticated", config.allow_unauthenticated));
    PARLEY_CONFIG_CHECK(auth.flag("allow_insecure", config.allow_insecure));
    PARLEY_CONFIG_CHECK(auth.flag("allow_remote_agent_registration",
                                  config.allow_remote_agent_registration));
    auto keys = auth.table("api_keys");
    if (!keys) return std::unexpected(keys.error());
    if (*keys) {
      for (const auto& [name, value] : **keys) {
        if (!value.is_string() || value.as_string()->get().empty()) {
          return invalid(file + ": 'auth.api_keys." + std::string(name.str()) +
                         "' must be a non-empty string");
        }
        config.api_keys.insert_or_assign(std::string(name.str()),
                                         value.as_string()->get());
      }
    }
    PARLEY_CONFIG_CHECK(auth.finish());
  }

  auto limits_table = top.table("limits");
  if (!limits_table) return std::unexpected(limits_table.error());
  if (*limits_table) {
    TomlTable limits(**limits_table, "limits", file);
    auto& options = config.connection;
    PARLEY_CONFIG_CHECK(
        limits.count("max_frame_bytes", options.max_frame_bytes));
    PARLEY_CONFIG_CHECK(
        limits.count("max_connections", config.max_connections));
    PARLEY_CONFIG_CHECK(
        limits.count("max_requests_in_flight", options.max_requests_in_flight));
    PARLEY_CONFIG_CHECK(limits.count("max_request_bytes_in_flight",
                                     options.max_request_bytes_in_flight));
    PARLEY_CONFIG_CHECK(
        limits.count("max_total_request_bytes_in_flight",
                     options.max_total_request_bytes_in_flight));
    PARLEY_CONFIG_CHECK(
        limits.count("send_queue_frames", options.send_queue.max_frames));
    PARLEY_CONFIG_CHECK(
        limits.count("send_queue_bytes", options.send_queue.max_bytes));
    PARLEY_CONFIG_CHECK(limits.count("total_send_queue_bytes",
                                     options.max_total_send_queue_bytes));
    PARLEY_CONFIG_CHECK(limits.finish());
  }

  auto keepalive_table = top.table("keepalive");
  if (!keepalive_table) return std::unexpected(keepalive_table.error());
  if (*keepalive_table) {
    TomlTable keepalive(**keepalive_table, "keepalive", file);
    PARLEY_CONFIG_CHECK(
        keepalive.seconds("ping_interval", config.connection.ping_interval));
    PARLEY_CONFIG_CHECK(
        keepalive.seconds("ping_timeout", config.connection.ping_timeout));
    PARLEY_CONFIG_CHECK(keepalive.finish());
  }

  auto threads_table = top.table("threads");
  if (!threads_table) return std::unexpected(threads_table.error());
  if (*threads_table) {
    TomlTable threads(**threads_table, "threads", file);
    PARLEY_CONFIG_CHECK(threads.count("io", config.io_threads));
    PARLEY_CONFIG_CHECK(threads.finish());
  }

  auto log_table = top.table("log");
  if (!log_table) return std::unexpected(log_table.error());
  if (*log_table) {
    TomlTable log(**log_table, "log", file);
    PARLEY_CONFIG_CHECK(log.count("memtable_bytes", config.memtable_bytes));
    PARLEY_CONFIG_CHECK(log.seconds("lease_timeout", config.lease_timeout));
    PARLEY_CONFIG_CHECK(log.finish());
  }

  auto timing_table = top.table("timing");
  if (!timing_table) return std::unexpected(timing_table.error());
  if (*timing_table) {
    TomlTable timing(**timing_table, "timing", file);
    PARLEY_CONFIG_CHECK(
        timing.seconds("ttl_sweep_interval", config.ttl_sweep_interval));
    PARLEY_CONFIG_CHECK(timing.seconds("expectation_sweep_interval",
                                       config.expectation_sweep_interval));
    PARLEY_CONFIG_CHECK(
        timing.seconds("invite_ack_timeout", config.invite_ack_timeout));
    PARLEY_CONFIG_CHECK(timing.seconds("drain_timeout", config.drain_timeout));
    PARLEY_CONFIG_CHECK(timing.seconds("handshake_timeout",
                                       config.connection.handshake_timeout));
    PARLEY_CONFIG_CHECK(timing.finish());
  }
  return top.finish();
}

}  // namespace

Result<HostPort> parse_host_port(std::string_view text) {
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() ||
        text[close + 1] != ':') {
      return invalid("expected [IPv6]:PORT, got '" + std::string(text) + "'");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return invalid("expected HOST:PORT, got '" + std::string(text) + "'");
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  unsigned value = 0;
  auto [end, ec] =
      std::from_chars(port.data(), port.data() + port.size(), value);
  if (host.empty() || port.empty() || ec != std::errc() ||
      end != port.data() + port.size() || value > 65535) {
    return invalid("expected HOST:PORT with a port 0-65535, got '" +
                   std::string(text) + "'");
  }
  return HostPort{std::string(host), static_cast<std::uint16_t>(value)};
}

std::string to_string(const HostPort& address) {
  const bool v6 = address.host.find(':') != std::string::npos;
  return (v6 ? "[" + address.host + "]" : address.host) + ":" +
         std::to_string(address.port);
}

std::optional<milliseconds> seconds_setting(double seconds) {
  if (!(seconds >= 0 && seconds <= kMaxSettingSeconds)) return std::nullopt;
  return milliseconds(static_cast<std::int64_t>(std::llround(seconds * 1000)));
}

bool is_loopback(std::string_view host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(std::string(host), ec);
  return !ec && address.is_loopback();
}

Result<void> load_config_file(const std::filesystem::path& file,
                              ServerConfig& config) {
  // A directory opens as an empty stream, which would parse as an empty
  // table: every setting silently left at its default.
  std::error_code ignored;
  if (std::filesystem::is_directory(file, ignored)) {
    return invalid(file.string() + ": a directory, not a configuration file");
  }
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& error) {
    std::ostringstream message;
    message << file.string() << ": " << error.description();
    // toml++ gives no position when the file could not be read at all.
    if (error.source().begin.line > 0) {
      message << " (line " << error.source().begin.line << ", column "
              << error.source().begin.column << ")";
    }
    return invalid(message.str());
  }
  return read_file(root, file.string(), config);
}

Result<void> validate(const ServerConfig& config) {
  if (config.data.empty()) return invalid("no data directory (--data DIR)");
  if (config.tls_cert.has_value() != config.tls_key.has_value()) {
    return invalid("TLS needs both --tls-cert and --tls-key");
  }
  if (config.tls()) {
    // Loaded as the server will load them, so that --check-config reports
    // a file that is no certificate, or a key that is not the certificate's.
    auto loaded = make_tls_context(*config.tls_cert, *config.tls_key);
    if (!loaded) return std::unexpected(loaded.error());
  }
  if (config.auth_schemes.empty()) return invalid("no auth scheme enabled");
  for (const auto& scheme : config.auth_schemes) {
    if (scheme != "none" && scheme != "api_key") {
      return invalid("unknown auth scheme '" + scheme +
                     "' (known: none, api_key)");
    }
  }
  auto enabled = [&](std::string_view scheme) {
    return std::ranges::find(config.auth_schemes, scheme) !=
           config.auth_schemes.end();
  };
  if (enabled("api_key") && config.api_keys.empty()) {
    return invalid(
        "auth scheme api_key needs keys: add [auth.api_keys] to the config "
        "file");
  }
  const std::string& host = config.listen.host;
  if (!is_loopback(host)) {
    if (enabled("none") && !config.allow_unauthenticated) {
      return invalid(
          "refusing auth scheme 'none' on non-loopback address " + host +
          ": anyone who can reach it could register agents without "
          "credentials; use --auth api_key, or pass --allow-unauthenticated "
          "to serve it anyway");
    }
    if (enabled("api_key") && !config.tls() && !config.allow_insecure) {
      return invalid(
          "refusing auth scheme 'api_key' without TLS on non-loopback "
          "address " +
          host +
          ": keys would cross the network in clear text; set --tls-cert and "
          "--tls-key, or pass --allow-insecure to serve it anyway");
    }
  }
  const auto& c = config.connection;
  if (c.max_frame_bytes == 0 || c.send_queue.max_frames == 0 ||
      c.send_queue.max_bytes == 0 || c.max_requests_in_flight == 0 ||
      c.max_request_bytes_in_flight == 0 ||
      c.max_total_request_bytes_in_flight == 0 ||
      c.max_total_send_queue_bytes == 0) {
    return invalid(
        "frame, send queue and requests-in-flight limits must be positive");
  }
  if (c.send_queue.max_bytes < c.max_frame_bytes) {
    return invalid("the send queue (" + std::to_string(c.send_queue.max_bytes) +
                   " bytes) must hold at least one frame of max_frame_bytes (" +
                   std::to_string(c.max_frame_bytes) + ")");
  }
  if (c.ping_interval.count() > 0 && c.ping_timeout.count() <= 0) {
    return invalid("keepalive needs a ping timeout above 0 seconds");
  }
  if (c.handshake_timeout.count() <= 0) {
    return invalid("the handshake timeout must be above 0 seconds");
  }
  if (config.io_threads == 0 || config.io_threads > kMaxIoThreads) {
    return invalid("threads.io (--io-threads) must be from 1 to " +
                   std::to_string(kMaxIoThreads) + ", got " +
                   std::to_string(config.io_threads));
  }
  if (config.lease_timeout < std::chrono::milliseconds(300)) {
    return invalid("the lease timeout must be at least 0.3 seconds");
  }
  return {};
}

std::size_t effective_max_connections(const ServerConfig& config) {
  if (config.max_connections != 0) return config.max_connections;
  return std::max<std::size_t>(1, open_file_limit() / 2);
}

std::string describe(const ServerConfig& config) {
  std::ostringstream out;
  const auto& c = config.connection;
  std::vector<std::string> key_names;
  for (const auto& [name, key] : config.api_keys) key_names.push_back(name);
  out << "data = " << log::redact_location(config.data.string()) << '\n'
      << "standby = " << std::boolalpha << config.standby << '\n'
      << "listen = " << to_string(config.listen) << '\n'
      << "admin = " << (config.admin ? to_string(*config.admin) : "off") << '\n'
      << "tls = "
      << (config.tls() ? config.tls_cert->string() + " (key " +
                             config.tls_key->string() + ")"
                       : "off")
      << '\n'
      << "auth.schemes = " << join(config.auth_schemes) << '\n'
      << "auth.api_keys = "
      << (key_names.empty() ? "none" : join(key_names) + " (keys not shown)")
      << '\n'
      << "auth.allow_unauthenticated = " << std::boolalpha
      << config.allow_unauthenticated << '\n'
      << "auth.allow_insecure = " << config.allow_insecure << '\n'
      << "auth.allow_remote_agent_registration = "
      << config.allow_remote_agent_registration << '\n'
      << "limits.max_frame_bytes = " << c.max_frame_bytes << '\n'
      << "limits.max_connections = " << effective_max_connections(config)
      << (config.max_connections == 0
              ? " (automatic: half the open-file limit, " +
                    std::to_string(open_file_limit()) + ")"
              : std::string())
      << '\n'
      << "limits.max_requests_in_flight = " << c.max_requests_in_flight << '\n'
      << "limits.max_request_bytes_in_flight = "
      << c.max_request_bytes_in_flight << '\n'
      << "limits.max_total_request_bytes_in_flight = "
      << c.max_total_request_bytes_in_flight << '\n'
      << "limits.send_queue_frames = " << c.send_queue.max_frames << '\n'
      << "limits.send_queue_bytes = " << c.send_queue.max_bytes << '\n'
      << "limits.total_send_queue_bytes = " << c.max_total_send_queue_bytes
      << '\n'
      << "keepalive.ping_interval = " << seconds_text(c.ping_interval) << '\n'
      << "keepalive.ping_timeout = " << seconds_text(c.ping_timeout) << '\n'
      << "threads.io = " << config.io_threads << '\n'
      << "log.memtable_bytes = "
      << (config.memtable_bytes == 0
              ? std::string("0 (RocksDB's default, 64 MiB)")
              : std::to_string(config.memtable_bytes))
      << '\n'
      << "log.lease_timeout = " << seconds_text(config.lease_timeout) << '\n'
      << "timing.ttl_sweep_interval = "
      << seconds_text(config.ttl_sweep_interval) << '\n'
      << "timing.expectation_sweep_interval = "
      << seconds_text(config.expectation_sweep_interval) << '\n'
      << "timing.invite_ack_timeout = "
      << seconds_text(config.invite_ack_timeout) << '\n'
      << "timing.drain_timeout = " << seconds_text(config.drain_timeout) << '\n'
      << "timing.handshake_timeout = " << seconds_text(c.handshake_timeout)
      << '\n';
  return out.str();
}

}  // namespace parley::transport
