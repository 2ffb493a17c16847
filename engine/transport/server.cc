#include "engine/transport/server.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "engine/hub/hub.h"
#include "engine/hub/hub_health.h"
#include "engine/hub/sweeper.h"
#include "engine/ops/control_plane.h"
#include "engine/registry/auth.h"
#include "engine/transport/admin_http.h"
#include "engine/transport/binding_table.h"
#include "engine/transport/connection.h"
#include "engine/transport/connection_registry.h"
#include "engine/transport/listener.h"
#include "engine/transport/metrics.h"
#include "engine/transport/socket_slots.h"
#include "engine/transport/tls_context.h"
#include "log/log_store.h"
#include "log/thread_name.h"

namespace parley::transport {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

engine::Result<tcp::endpoint> resolve(const HostPort& address) {
  std::string host = address.host == "localhost" ? "127.0.0.1" : address.host;
  boost::system::error_code ec;
  auto ip = net::ip::make_address(host, ec);
  if (ec) {
    return engine::invalid("cannot listen on '" + address.host +
                           "': not an IP address (" + ec.message() + ")");
  }
  return tcp::endpoint(ip, address.port);
}

std::shared_ptr<const engine::AuthRegistry> auth_registry(
    const ServerConfig& config) {
  auto registry = std::make_shared<engine::AuthRegistry>();
  auto enabled = [&](std::string_view scheme) {
    return std::ranges::find(config.auth_schemes, scheme) !=
           config.auth_schemes.end();
  };
  if (!enabled(engine::kNoAuthScheme)) {
    registry->unregister_scheme(engine::kNoAuthScheme);
  }
  if (enabled(engine::kApiKeyScheme)) {
    engine::ApiKeyAuth::KeyMap keys(config.api_keys.begin(),
                                    config.api_keys.end());
    registry->register_scheme(std::string(engine::kApiKeyScheme),
                              std::make_shared<engine::ApiKeyAuth>(keys));
  }
  return registry;
}

engine::HubOptions hub_options(const ServerConfig& config,
                               std::shared_ptr<log::LogStore> store,
                               std::shared_ptr<const engine::Clock> clock) {
  return {.store = std::move(store),
          .clock = std::move(clock),
          .invite_ack_timeout = config.invite_ack_timeout,
          .auth = auth_registry(config)};
}

}  // namespace

struct Server::Impl {
  ServerConfig config;
  std::unique_ptr<engine::Hub> hub;
  std::unique_ptr<engine::ControlPlane> control_plane;
  Metrics metrics;
  // Declared before io: a session still queued there holds a slot.
  std::unique_ptr<SocketSlots> sockets;
  SocketSlots admin_sockets{kMaxAdminConnections};
  std::unique_ptr<BindingTable> bindings;
  ConnectionRegistry connections;
  std::unique_ptr<ServerContext> context;
  std::unique_ptr<engine::Sweeper> sweeper;
  std::shared_ptr<net::ssl::context> tls;
  net::io_context io;
  net::executor_work_guard<net::io_context::executor_type> work =
      net::make_work_guard(io);
  std::shared_ptr<Listener> listener;
  std::shared_ptr<AdminHttp> admin;
  std::vector<std::thread> threads;

  std::mutex mutex;
  std::condition_variable signalled;
  bool got_signal = false;  // or stop_soon() was called
  bool shut_down = false;
  engine::Result<void> close_result;
  std::unique_ptr<net::signal_set> signals;

  Metrics::Held held() const {
    Metrics::Held sum;
    for (const auto& connection : connections.snapshot()) {
      sum.requests_in_flight += connection->in_flight();
    }
    sum.request_bytes_in_flight =
        static_cast<std::int64_t>(context->request_budget.bytes());
    sum.send_queue_bytes =
        static_cast<std::int64_t>(context->send_queue_total.bytes.load());
    return sum;
  }

  AdminResponse answer_admin(std::string_view target) {
    const std::string_view path = target.substr(0, target.find('?'));
    const engine::HubHealth health = hub->health();
    if (path == "/healthz") {
      const bool accepting =
          !health.failure && !health.closed && !context->draining.load();
      nlohmann::json body = engine::to_json(health);
      body["serving"] = accepting;
      return {accepting ? 200u : 503u, "application/json", body.dump() + "\n"};
    }
    if (path == "/metrics") {
      return {200, "text/plain; version=0.0.4; charset=utf-8",
              metrics.render(health, held())};
    }
    return {404, "text/plain; charset=utf-8", "not found\n"};
  }

  // Waits until no connection has a request in flight, or `deadline`.
  bool wait_in_flight(Clock::time_point deadline) {
    while (true) {
      int in_flight = 0;
      for (const auto& connection : connections.snapshot()) {
        in_flight += connection->in_flight();
      }
      if (in_flight == 0) return true;
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  void wait_connections_gone(Clock::time_point deadline) {
    while (connections.size() > 0 && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  engine::Result<void> shutdown() {
    {
      std::lock_guard lock(mutex);
      if (shut_down) return close_result;
      shut_down = true;
    }
    context->draining = true;
    listener->stop();
    bool hub_closed = false;
    if (!wait_in_flight(Clock::now() + config.drain_timeout)) {
      // Whatever still waits (create_channel for its acks) fails now.
      std::cerr << "parley serve: drain timeout; failing the requests still "
                   "in flight\n";
      close_result = hub->close();
      hub_closed = true;
      wait_in_flight(Clock::now() + std::chrono::seconds(5));
    }
    for (const auto& connection : connections.snapshot()) {
      connection->shut_down();
    }
    wait_connections_gone(Clock::now() +
                          2 * config.connection.handshake_timeout);
    if (sweeper) sweeper->stop();
    if (!hub_closed) close_result = hub->close();
    if (admin) admin->stop();
    if (signals) {
      net::post(io, [this] {
        boost::system::error_code ignored;
        signals->cancel(ignored);
      });
    }
    work.reset();
    io.stop();
    for (auto& thread : threads) {
      if (thread.joinable()) thread.join();
    }
    return close_result;
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  if (impl_) shutdown();
}

engine::Result<std::unique_ptr<Server>> Server::start(
    ServerConfig config, std::shared_ptr<log::LogStore> store,
    std::shared_ptr<const engine::Clock> clock) {
  if (auto valid = validate(config); !valid) {
    return std::unexpected(valid.error());
  }
  auto hub = engine::Hub::open(
      hub_options(config, std::move(store), std::move(clock)));
  if (!hub) return std::unexpected(hub.error());
  return start(std::move(config), std::move(*hub));
}

engine::Result<std::unique_ptr<engine::Hub>> Server::open_standby_hub(
    const ServerConfig& config, std::shared_ptr<log::LogStore> view,
    std::shared_ptr<const engine::Clock> clock) {
  if (auto valid = validate(config); !valid) {
    return std::unexpected(valid.error());
  }
  return engine::Hub::open_standby(
      hub_options(config, std::move(view), std::move(clock)));
}

engine::Result<std::unique_ptr<Server>> Server::start(
    ServerConfig config, std::unique_ptr<engine::Hub> hub) {
  if (auto valid = validate(config); !valid) {
    return std::unexpected(valid.error());
  }
  auto impl = std::make_unique<Impl>();
  Impl& s = *impl;
  s.config = std::move(config);
  const ServerConfig& c = s.config;

  auto endpoint = resolve(c.listen);
  if (!endpoint) return std::unexpected(endpoint.error());
  std::optional<tcp::endpoint> admin_endpoint;
  if (c.admin) {
    auto resolved = resolve(*c.admin);
    if (!resolved) return std::unexpected(resolved.error());
    admin_endpoint = *resolved;
  }
  if (c.tls()) {
    auto tls = make_tls_context(*c.tls_cert, *c.tls_key);
    if (!tls) return std::unexpected(tls.error());
    s.tls = std::move(*tls);
  }

  s.hub = std::move(hub);
  s.control_plane = std::make_unique<engine::ControlPlane>(
      *s.hub, engine::WireOptions{.allow_remote_agent_registration =
                                      c.allow_remote_agent_registration});
  s.bindings = std::make_unique<BindingTable>(*s.hub);
  s.context =
      std::make_unique<ServerContext>(*s.hub, *s.control_plane, *s.bindings,
                                      s.metrics, s.connections, c.connection);

  s.sockets = std::make_unique<SocketSlots>(effective_max_connections(c));
  auto listener =
      Listener::open(s.io, *endpoint, s.tls.get(), *s.context, *s.sockets);
  if (!listener) {
    s.hub->close();
    return std::unexpected(listener.error());
  }
  s.listener = std::move(*listener);
  if (admin_endpoint) {
    auto admin = AdminHttp::open(
        s.io, *admin_endpoint,
        [&s](std::string_view target) { return s.answer_admin(target); },
        s.admin_sockets);
    if (!admin) {
      s.hub->close();
      return std::unexpected(admin.error());
    }
    s.admin = std::move(*admin);
  }

  s.sweeper = std::make_unique<engine::Sweeper>(
      *s.hub, engine::SweeperOptions{
                  .ttl_interval = c.ttl_sweep_interval,
                  .expectation_interval = c.expectation_sweep_interval});
  if (auto started = s.sweeper->start(); !started) {
    s.hub->close();
    return std::unexpected(started.error());
  }
  for (std::size_t i = 0; i < c.io_threads; ++i) {
    s.threads.emplace_back([&s] {
      log::name_current_thread("parley-io");
      s.io.run();
    });
  }
  s.listener->start();
  if (s.admin) s.admin->start();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

std::uint16_t Server::port() const {
  return impl_->listener->local_endpoint().port();
}

std::optional<std::uint16_t> Server::admin_port() const {
  if (!impl_->admin) return std::nullopt;
  return impl_->admin->local_endpoint().port();
}

std::string Server::url() const {
  HostPort bound{impl_->config.listen.host, port()};
  return (impl_->config.tls() ? "wss://" : "ws://") + to_string(bound);
}

engine::Hub& Server::hub() { return *impl_->hub; }

const ServerConfig& Server::config() const { return impl_->config; }

engine::Result<void> Server::shutdown() { return impl_->shutdown(); }

void Server::catch_signals() {
  Impl& s = *impl_;
  if (!s.signals) {
    s.signals = std::make_unique<net::signal_set>(s.io, SIGINT, SIGTERM);
  }
}

void Server::stop_soon() {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  if (s.got_signal) return;
  s.got_signal = true;
  s.signalled.notify_all();
}

engine::Result<void> Server::run_until_signal() {
  catch_signals();
  Impl& s = *impl_;
  std::function<void(const boost::system::error_code&, int)> on_signal;
  on_signal = [&s, &on_signal](const boost::system::error_code& ec,
                               int signal) {
    if (ec) return;
    std::unique_lock lock(s.mutex);
    if (s.got_signal) {
      std::cerr << "parley serve: second signal; exiting now\n";
      std::_Exit(128 + signal);
    }
    s.got_signal = true;
    std::cerr << "parley serve: signal " << signal
              << "; draining (a second signal exits at once)\n";
    s.signalled.notify_all();
    s.signals->async_wait(on_signal);
  };
  s.signals->async_wait(on_signal);
  {
    std::unique_lock lock(s.mutex);
    s.signalled.wait(lock, [&] { return s.got_signal; });
  }
  return shutdown();
}

}  // namespace parley::transport
