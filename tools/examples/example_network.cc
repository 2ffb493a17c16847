#include "tools/examples/example_network.h"

#include <unistd.h>

#include "log/rocksdb_log_store.h"

namespace parley::examples {

ExampleNetwork::ExampleNetwork(std::string url) : url_(std::move(url)) {
  if (!url_.empty()) return;
  std::string pattern =
      (std::filesystem::temp_directory_path() / "parley-example-XXXXXX")
          .string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  dir_.path = pattern;
  auto store = log::open_rocksdb_log_store(dir_.path / "store");
  if (!store) throw std::runtime_error("cannot open the store");
  engine::HubOptions options;
  options.store = std::shared_ptr<log::LogStore>(std::move(store->store));
  auto opened = engine::Hub::open(std::move(options));
  if (!opened) throw std::runtime_error(opened.error().message);
  hub_ = std::move(*opened);
}

ExampleNetwork::TempDir::~TempDir() {
  if (path.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

std::shared_ptr<client::HubClient> ExampleNetwork::connect() {
  if (hub_) return client::HubClient::in_process(io_.executor(), *hub_);
  return need(client::wait<std::shared_ptr<client::HubClient>>([&](auto done) {
                client::HubClient::connect(io_.executor(), url_, {}, done);
              }),
              "connect to " + url_);
}

std::string unique_name(std::string_view prefix) {
  return std::string(prefix) + "-" + std::to_string(getpid());
}

}  // namespace parley::examples
