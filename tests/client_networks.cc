#include "tests/client_networks.h"

#include <doctest/doctest.h>

#include <thread>

#include "engine/client/envelopes.h"
#include "log/rocksdb_log_store.h"

namespace parley::testing {

void OpenedClients::close_all() {
  for (const auto& weak : clients_) {
    if (auto client = weak.lock()) client::close_and_wait(*client);
  }
  clients_.clear();
}

std::shared_ptr<client::HubClient> OpenedClients::add(
    std::shared_ptr<client::HubClient> client) {
  clients_.push_back(client);
  return client;
}

InProcessNet::InProcessNet() {
  auto opened = log::open_rocksdb_log_store(dir_.path() / "store");
  REQUIRE_MESSAGE(opened.has_value(), error_message(opened));
  engine::HubOptions options;
  options.store = std::shared_ptr<log::LogStore>(std::move(opened->store));
  options.invite_ack_timeout = 10s;
  auto auth = std::make_shared<engine::AuthRegistry>();
  auth->register_scheme(
      std::string(engine::kApiKeyScheme),
      std::make_shared<engine::ApiKeyAuth>(
          engine::ApiKeyAuth::KeyMap{{kKeyedAgent, kKeyedSecret}}));
  options.auth = std::move(auth);
  auto hub = engine::Hub::open(std::move(options));
  REQUIRE_MESSAGE(hub.has_value(), error_message(hub));
  hub_ = std::move(*hub);
}

InProcessNet::~InProcessNet() {
  clients_.close_all();
  (void)hub_->close();
}

std::shared_ptr<client::HubClient> InProcessNet::connect(
    client::HubClientOptions options) {
  return clients_.add(
      client::HubClient::in_process(io_.executor(), *hub_, std::move(options)));
}

WsNet::WsNet()
    : serve_(std::make_unique<ServeFixture>([](transport::ServerConfig& c) {
        c.auth_schemes = {"none", "api_key"};
        c.api_keys = {{kKeyedAgent, kKeyedSecret}};
      })) {}

std::shared_ptr<client::HubClient> WsNet::connect(
    client::HubClientOptions options) {
  auto connected =
      client::wait<std::shared_ptr<client::HubClient>>([&](auto done) {
        client::HubClient::connect(io_.executor(), url(), std::move(options),
                                   done);
      });
  REQUIRE_MESSAGE(connected.has_value(), connected.error().message);
  return clients_.add(*connected);
}

void Recorder::add(const engine::Envelope& envelope) {
  {
    std::lock_guard lock(mutex_);
    envelopes_.push_back(envelope);
  }
  changed_.notify_all();
}

bool Recorder::wait_until(
    const std::function<bool(const std::vector<engine::Envelope>&)>& done,
    std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return done(envelopes_); });
}

bool Recorder::wait_for_type(std::string_view event_type,
                             std::chrono::milliseconds timeout) {
  return wait_until(
      [&](const std::vector<engine::Envelope>& seen) {
        return std::ranges::any_of(seen, [&](const engine::Envelope& e) {
          return e.event_type == event_type;
        });
      },
      timeout);
}

std::vector<engine::Envelope> Recorder::all() const {
  std::lock_guard lock(mutex_);
  return envelopes_;
}

std::vector<std::string> Recorder::types() const {
  std::vector<std::string> types;
  for (const auto& envelope : all()) types.push_back(envelope.event_type);
  return types;
}

std::vector<std::string> Recorder::texts() const {
  std::vector<std::string> texts;
  for (const auto& envelope : all()) {
    if (envelope.event_type == client::event_type::kText) {
      texts.push_back(client::text_of(envelope));
    }
  }
  return texts;
}

bool eventually(const std::function<bool()>& done,
                std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

SelfSignedCertificate self_signed_certificate(
    const std::filesystem::path& dir) {
  SelfSignedCertificate made{dir / "cert.pem", dir / "key.pem"};
  auto run = run_command(
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=parley "
      "-addext subjectAltName=IP:127.0.0.1 -keyout " +
      made.key.string() + " -out " + made.cert.string());
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return made;
}

}  // namespace parley::testing
