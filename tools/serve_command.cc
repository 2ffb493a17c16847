#include "tools/serve_command.h"

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <expected>
#include <initializer_list>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <stop_token>
#include <thread>

#include "engine/hub/hub.h"
#include "engine/transport/open_file_limit.h"
#include "engine/transport/server.h"
#include "engine/transport/server_config.h"
#include "log/open_store.h"
#include "log/store_location.h"
#include "tools/exit_codes.h"

namespace parley::tools {
namespace {

using std::chrono::milliseconds;
using transport::ServerConfig;

// What the command line says; each set flag overrides the config file.
struct ServeFlags {
  std::optional<std::string> config_file;
  std::optional<std::string> data;
  std::optional<std::string> listen;
  std::optional<std::string> admin;
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
  std::optional<std::string> auth;
  bool allow_unauthenticated = false;
  bool allow_insecure = false;
  bool allow_remote_agent_registration = false;
  std::optional<std::size_t> max_frame_bytes;
  std::optional<std::size_t> max_connections;
  std::optional<std::size_t> max_requests_in_flight;
  std::optional<std::size_t> max_request_bytes_in_flight;
  std::optional<std::size_t> max_total_request_bytes_in_flight;
  std::optional<std::size_t> total_send_queue_bytes;
  std::optional<std::size_t> send_queue_frames;
  std::optional<std::size_t> send_queue_bytes;
  std::optional<double> ping_interval;
  std::optional<double> ping_timeout;
  std::optional<std::size_t> io_threads;
  std::optional<std::size_t> memtable_bytes;
  std::optional<double> ttl_sweep_interval;
  std::optional<double> expectation_sweep_interval;
  std::optional<double> invite_ack_timeout;
  std::optional<double> drain_timeout;
  std::optional<double> lease_timeout;
  bool standby = false;
  bool check_config = false;
};

// A flag in seconds and the setting it overrides.
struct SecondsFlag {
  std::string_view name;
  const std::optional<double>& value;
  milliseconds& setting;
};

// Applies the flags that are set, with the config file's rule for seconds.
engine::Result<void> apply_seconds_flags(
    std::initializer_list<SecondsFlag> flags) {
  for (const SecondsFlag& flag : flags) {
    if (!flag.value) continue;
    auto duration = transport::seconds_setting(*flag.value);
    if (!duration) {
      return engine::invalid(std::string(flag.name) + " must be " +
                             std::string(transport::kSecondsRule));
    }
    flag.setting = *duration;
  }
  return {};
}

// The config file (if any) with the flags applied over it.
engine::Result<ServerConfig> effective_config(const ServeFlags& flags) {
  ServerConfig config;
  if (flags.config_file) {
    auto loaded = transport::load_config_file(*flags.config_file, config);
    if (!loaded) return std::unexpected(loaded.error());
  }
  if (flags.data) config.data = *flags.data;
  auto address =
      [](const std::string& flag,
         const std::string& text) -> engine::Result<transport::HostPort> {
    auto parsed = transport::parse_host_port(text);
    if (!parsed) return engine::invalid(flag + ": " + parsed.error().message);
    return parsed;
  };
  if (flags.listen) {
    auto parsed = address("--listen", *flags.listen);
    if (!parsed) return std::unexpected(parsed.error());
    config.listen = *parsed;
  }
  if (flags.admin) {
    auto parsed = address("--admin", *flags.admin);
    if (!parsed) return std::unexpected(parsed.error());
    config.admin = *parsed;
  }
  if (flags.tls_cert) config.tls_cert = *flags.tls_cert;
  if (flags.tls_key) config.tls_key = *flags.tls_key;
  if (flags.auth) {
    config.auth_schemes.clear();
    std::stringstream list(*flags.auth);
    std::string scheme;
    while (std::getline(list, scheme, ',')) {
      if (!scheme.empty()) config.auth_schemes.push_back(scheme);
    }
  }
  if (flags.allow_unauthenticated) config.allow_unauthenticated = true;
  if (flags.allow_insecure) config.allow_insecure = true;
  if (flags.allow_remote_agent_registration) {
    config.allow_remote_agent_registration = true;
  }
  auto& c = config.connection;
  if (flags.max_frame_bytes) c.max_frame_bytes = *flags.max_frame_bytes;
  if (flags.max_connections) config.max_connections = *flags.max_connections;
  if (flags.max_requests_in_flight) {
    c.max_requests_in_flight = *flags.max_requests_in_flight;
  }
  if (flags.max_request_bytes_in_flight) {
    c.max_request_bytes_in_flight = *flags.max_request_bytes_in_flight;
  }
  if (flags.max_total_request_bytes_in_flight) {
    c.max_total_request_bytes_in_flight =
        *flags.max_total_request_bytes_in_flight;
  }
  if (flags.send_queue_frames)
    c.send_queue.max_frames = *flags.send_queue_frames;
  if (flags.send_queue_bytes) c.send_queue.max_bytes = *flags.send_queue_bytes;
  if (flags.total_send_queue_bytes) {
    c.max_total_send_queue_bytes = *flags.total_send_queue_bytes;
  }
  if (flags.io_threads) config.io_threads = *flags.io_threads;
  if (flags.memtable_bytes) config.memtable_bytes = *flags.memtable_bytes;
  auto timed = apply_seconds_flags({
      {"--ping-interval", flags.ping_interval, c.ping_interval},
      {"--ping-timeout", flags.ping_timeout, c.ping_timeout},
      {"--ttl-sweep-interval", flags.ttl_sweep_interval,
       config.ttl_sweep_interval},
      {"--expectation-sweep-interval", flags.expectation_sweep_interval,
       config.expectation_sweep_interval},
      {"--invite-ack-timeout", flags.invite_ack_timeout,
       config.invite_ack_timeout},
      {"--drain-timeout", flags.drain_timeout, config.drain_timeout},
      {"--lease-timeout", flags.lease_timeout, config.lease_timeout},
  });
  if (!timed) return std::unexpected(timed.error());
  if (flags.standby) config.standby = true;
  if (auto valid = transport::validate(config); !valid) {
    return std::unexpected(valid.error());
  }
  return config;
}

// Set from a signal handler while a standby waits to take over.
volatile std::sig_atomic_t standby_signal = 0;
// Why this hub lost its store, once the store's lease keeper said so, and
// the server to stop then (set while it runs).
struct LostStore {
  std::mutex mutex;
  std::optional<std::string> reason;
  transport::Server* server = nullptr;
};
LostStore lost_store;

// Sets (or, with nullptr, clears) the server a lost store stops; stops it
// at once if the store was lost before.
void stop_on_lost_store(transport::Server* server) {
  std::lock_guard lock(lost_store.mutex);
  lost_store.server = server;
  if (server != nullptr && lost_store.reason) server->stop_soon();
}

log::StoreOptions store_options(const ServerConfig& config) {
  return {.memtable_bytes = config.memtable_bytes,
          .lease_timeout = config.lease_timeout,
          // A hub that lost its store can acknowledge nothing more: it
          // stops, so its clients reconnect to the hub that has the store.
          .on_writer_lost = [](const log::Error& why) {
            std::lock_guard lock(lost_store.mutex);
            if (lost_store.reason) return;
            lost_store.reason = why.message;
            std::cerr << "parley serve: this hub lost its store: "
                      << why.message << "; stopping\n";
            // A stop already under way (a signal) just goes on.
            if (lost_store.server != nullptr) lost_store.server->stop_soon();
          }};
}

void report_open(const log::RecoveryReport& recovery) {
  if (recovery.torn_tail) {
    std::cerr << "parley serve: recovered from a torn WAL tail: "
              << recovery.detail << '\n';
  }
  if (recovery.lapsed_writers_ended > 0) {
    std::cerr << "parley serve: took the store over from a writer whose "
                 "lease had lapsed (its session was ended)\n";
  }
}

// The standby's wait: announces that it follows (once a signal would stop
// it cleanly), then follows the log into `hub` while another thread
// waits for the store to open read-write (its writer gone, or its lease
// lapsed: on PostgreSQL one connection polls the writer's lock), then makes
// the hub its writer. Returns the exit code when it ends otherwise (a
// signal, a failure).
std::optional<int> take_over_when_free(const ServerConfig& config,
                                       engine::Hub& hub) {
  // How often the wait looks at the opener and the signal flag.
  constexpr auto kFollowFor = std::chrono::milliseconds(25);
  constexpr auto kRetryAfter = std::chrono::milliseconds(100);
  const std::string where = log::redact_location(config.data.string());
  log::StoreOptions options = store_options(config);
  options.create_if_missing = false;
  options.lock_patience = std::chrono::milliseconds::max();
  auto on_signal = [](int) { standby_signal = 1; };
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // Announced only now: a signal from here on stops the standby cleanly.
  std::cout << "standby: following " << where << " from log sequence "
            << hub.store().last_sequence() << '\n'
            << std::flush;
  while (true) {
    std::optional<log::Result<log::OpenedLogStore>> opened;
    std::atomic<bool> done = false;
    std::jthread opener([&](std::stop_token stop) {
      log::StoreOptions waiting = options;
      waiting.stop = std::move(stop);
      opened = log::open_store(config.data.string(), waiting);
      done = true;
    });
    while (!done) {
      if (standby_signal != 0) {
        opener.request_stop();
        opener.join();
        std::cerr << "parley serve: standby stopped before taking over\n";
        return kExitOk;
      }
      // The database going away for a while (a restart, a network cut) is
      // waited out: the read is tried again.
      auto followed = hub.follow(kFollowFor);
      if (!followed && followed.error().log_code != log::ErrorCode::kIoError) {
        opener.request_stop();
        opener.join();
        std::cerr << "parley serve: standby cannot follow " << where << ": "
                  << followed.error().message << '\n';
        return kExitIoError;
      }
      if (!followed) {
        std::cerr << "parley serve: standby cannot follow " << where
                  << " (trying again): " << followed.error().message << '\n';
        std::this_thread::sleep_for(kRetryAfter);
      }
    }
    opener.join();
    // RocksDB does not wait for its lock; PostgreSQL may have gone away:
    // try again.
    if (!*opened && (*opened).error().code == log::ErrorCode::kBusy) {
      std::this_thread::sleep_for(kRetryAfter);
      continue;
    }
    if (!*opened && (*opened).error().code == log::ErrorCode::kIoError) {
      std::cerr << "parley serve: standby cannot reach " << where
                << " (trying again): " << (*opened).error().message << '\n';
      std::this_thread::sleep_for(kRetryAfter);
      continue;
    }
    if (!*opened) {
      std::cerr << "parley serve: standby cannot open " << where << ": "
                << (*opened).error().message << '\n';
      return exit_code_for((*opened).error().code);
    }
    const auto started = std::chrono::steady_clock::now();
    report_open((*opened)->recovery);
    if (auto taken = hub.take_over(std::move((*opened)->store)); !taken) {
      std::cerr << "parley serve: standby cannot take " << where
                << " over: " << taken.error().message << '\n';
      return kExitIoError;
    }
    // From here until the server catches signals itself (catch_signals,
    // just after it starts), a signal has its default effect: the process
    // ends, having served nothing.
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    std::cout << "took over " << where << " at log sequence "
              << hub.store().last_sequence() << " ("
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - started)
                     .count()
              << " ms to fold the rest and start writing)\n"
              << std::flush;
    return std::nullopt;
  }
}

// A standby's server, once it took the store over; or the exit code, its
// reason printed.
std::expected<std::unique_ptr<transport::Server>, int> start_standby(
    const ServerConfig& config) {
  const std::string where = log::redact_location(config.data.string());
  auto view = log::open_store_read_only(config.data.string());
  if (!view) {
    std::cerr << "parley serve: standby cannot read " << where << ": "
              << view.error().message << '\n';
    return std::unexpected(exit_code_for(view.error().code));
  }
  auto hub = transport::Server::open_standby_hub(config, std::move(*view));
  if (!hub) {
    std::cerr << "parley serve: standby cannot fold " << where << ": "
              << hub.error().message << '\n';
    return std::unexpected(kExitIoError);
  }
  if (auto ended = take_over_when_free(config, **hub)) {
    (void)(*hub)->close();
    return std::unexpected(*ended);
  }
  auto server = transport::Server::start(config, std::move(*hub));
  if (!server) {
    std::cerr << "parley serve: " << server.error().message << '\n';
    return std::unexpected(kExitUnavailable);
  }
  return std::move(*server);
}

int run(const ServeFlags& flags) {
  auto config = effective_config(flags);
  if (!config) {
    std::cerr << "parley serve: " << config.error().message << '\n';
    return kExitUsage;
  }
  // Sockets and the log's files share the open-file limit: take all the
  // kernel allows before the automatic max_connections is read from it.
  const std::size_t open_files = transport::raise_open_file_limit();
  if (config->max_connections > open_files / 2) {
    std::cerr << "parley serve: warning: max_connections ("
              << config->max_connections
              << ") is above half the open-file limit (" << open_files
              << "): connections may take the descriptors the log needs "
                 "for its files\n";
  }
  std::cout << "parley serve: effective configuration\n"
            << transport::describe(*config) << std::flush;
  if (flags.check_config) {
    std::cout << "configuration OK\n";
    return kExitOk;
  }
  std::unique_ptr<transport::Server> server;
  if (config->standby) {
    auto started = start_standby(*config);
    if (!started) return started.error();
    server = std::move(*started);
  } else {
    auto opened =
        log::open_store(config->data.string(), store_options(*config));
    if (!opened) {
      std::cerr << "parley serve: cannot open the store in "
                << log::redact_location(config->data.string()) << ": "
                << opened.error().message << '\n';
      return exit_code_for(opened.error().code);
    }
    report_open(opened->recovery);
    auto started = transport::Server::start(
        *config, std::shared_ptr<log::LogStore>(std::move(opened->store)));
    if (!started) {
      std::cerr << "parley serve: " << started.error().message << '\n';
      return kExitUnavailable;
    }
    server = std::move(*started);
  }
  server->catch_signals();
  std::cout << "listening on " << server->url() << '\n';
  if (auto admin = server->admin_port()) {
    std::cout << "admin on http://"
              << transport::to_string({config->admin->host, *admin}) << '\n';
  }
  std::cout << std::flush;
  stop_on_lost_store(server.get());
  auto closed = server->run_until_signal();
  stop_on_lost_store(nullptr);
  server.reset();
  {
    std::lock_guard lock(lost_store.mutex);
    if (lost_store.reason) {
      std::cerr << "parley serve: stopped: " << *lost_store.reason << '\n';
      return kExitUnavailable;
    }
  }
  if (!closed) {
    std::cerr << "parley serve: closing the hub failed: "
              << closed.error().message << '\n';
    return kExitIoError;
  }
  std::cerr << "parley serve: stopped cleanly\n";
  return kExitOk;
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  auto* serve = app.add_subcommand(
      "serve",
      "Serve the hub over AG2's WebSocket protocol until SIGINT/SIGTERM");
  serve->add_option("--config", flags->config_file,
                    "A TOML configuration file (flags override it)");
  serve->add_option("--data", flags->data,
                    "The hub's store: a RocksDB directory or a postgresql:// "
                    "URI (created if missing)");
  serve->add_option("--listen", flags->listen,
                    "HOST:PORT to accept WebSocket clients on (default "
                    "127.0.0.1:8765; port 0 picks a free port)");
  serve->add_option("--admin", flags->admin,
                    "HOST:PORT of the admin HTTP port (/healthz, /metrics); "
                    "off by default");
  serve->add_option("--tls-cert", flags->tls_cert,
                    "PEM certificate chain: serve wss:// instead of ws://");
  serve->add_option("--tls-key", flags->tls_key, "PEM private key for TLS");
  serve->add_option("--auth", flags->auth,
                    "Comma-separated auth schemes: none, api_key (default "
                    "none; api keys come from the config file)");
  serve->add_flag("--allow-unauthenticated", flags->allow_unauthenticated,
                  "Allow scheme none on a non-loopback address");
  serve->add_flag("--allow-insecure", flags->allow_insecure,
                  "Allow api_key without TLS on a non-loopback address");
  serve->add_flag("--allow-remote-agent-registration",
                  flags->allow_remote_agent_registration,
                  "Let a connection register remote_agent identities, owned "
                  "by the agents it holds");
  serve->add_option("--max-frame-bytes", flags->max_frame_bytes,
                    "Largest inbound message (default 4194304)");
  serve->add_option("--max-connections", flags->max_connections,
                    "Client sockets open at once; beyond it a new connection "
                    "is closed at once (default 0: half the open-file "
                    "limit)");
  serve->add_option("--max-requests-in-flight", flags->max_requests_in_flight,
                    "Requests of one connection in flight before the server "
                    "stops reading it until one is answered (default 1024)");
  serve->add_option("--max-request-bytes-in-flight",
                    flags->max_request_bytes_in_flight,
                    "The same bound in bytes of their frames (default "
                    "16777216)");
  serve->add_option("--max-total-request-bytes-in-flight",
                    flags->max_total_request_bytes_in_flight,
                    "Bytes of requests in flight across all connections "
                    "before the server stops reading any that would add to "
                    "them (default 268435456)");
  serve->add_option("--send-queue-frames", flags->send_queue_frames,
                    "Frames a connection may have waiting (default 16384)");
  serve->add_option("--send-queue-bytes", flags->send_queue_bytes,
                    "Bytes a connection may have waiting (default 33554432)");
  serve->add_option("--total-send-queue-bytes", flags->total_send_queue_bytes,
                    "Bytes waiting over all connections; beyond it a client "
                    "that is behind is closed (default 1073741824)");
  serve->add_option("--ping-interval", flags->ping_interval,
                    "Seconds between keepalive pings (default 20; 0: off)");
  serve->add_option("--ping-timeout", flags->ping_timeout,
                    "Seconds to wait for a pong (default 20)");
  serve->add_option("--io-threads", flags->io_threads,
                    "Threads running the sockets (default 2)");
  serve->add_option("--memtable-bytes", flags->memtable_bytes,
                    "Bytes a RocksDB memtable holds before it is flushed "
                    "(default 0: RocksDB's 64 MiB)");
  serve->add_option("--ttl-sweep-interval", flags->ttl_sweep_interval,
                    "Seconds between TTL sweeps (default 30; 0: off)");
  serve->add_option("--expectation-sweep-interval",
                    flags->expectation_sweep_interval,
                    "Seconds between expectation ticks (default 10; 0: off)");
  serve->add_option("--invite-ack-timeout", flags->invite_ack_timeout,
                    "Seconds create_channel waits for acks (default 30)");
  serve->add_option("--drain-timeout", flags->drain_timeout,
                    "Seconds a shutdown waits for requests (default 10)");
  serve->add_flag("--standby", flags->standby,
                  "Follow the store another hub writes and take it over "
                  "once that hub is gone; listen only from then on");
  serve->add_option("--lease-timeout", flags->lease_timeout,
                    "PostgreSQL: seconds the writer's lease lasts unrenewed, "
                    "how long a standby waits for a silent writer (default "
                    "3)");
  serve->add_flag("--check-config", flags->check_config,
                  "Validate and print the configuration, then exit (0 when "
                  "valid, 64 when not)");
  serve->callback([flags, &exit_code] { exit_code = run(*flags); });
}

}  // namespace parley::tools
