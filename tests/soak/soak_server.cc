#include "tests/soak/soak_server.h"

#include <signal.h>

#include <stdexcept>
#include <thread>

#include "tests/soak/process_probe.h"

namespace parley::soak {

SoakServer::SoakServer(std::string parley, std::filesystem::path dir,
                       std::size_t memtable_bytes)
    : parley_(std::move(parley)),
      dir_(std::move(dir)),
      memtable_bytes_(memtable_bytes) {}

std::string SoakServer::url() const {
  return "ws://127.0.0.1:" + std::to_string(port_);
}

void SoakServer::start(int generation) {
  if (port_ == 0) {
    port_ = free_loopback_port();
    do admin_port_ = free_loopback_port();
    while (admin_port_ == port_);
  }
  const std::filesystem::path out =
      dir_ / ("serve-" + std::to_string(generation) + ".out");
  process_ = std::make_unique<SpawnedProcess>(
      std::vector<std::string>{
          parley_, "serve", "--data", store().string(), "--listen",
          "127.0.0.1:" + std::to_string(port_), "--admin",
          "127.0.0.1:" + std::to_string(admin_port_), "--ttl-sweep-interval",
          "1", "--expectation-sweep-interval", "1", "--memtable-bytes",
          std::to_string(memtable_bytes_)},
      out, dir_ / "serve.err");
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (read_text_file(out).find("listening on ws://") == std::string::npos) {
    if (!process_->running() || std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("parley serve did not start; see " +
                               (dir_ / "serve.err").string());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::optional<int> SoakServer::stop() {
  if (!process_) return 0;
  process_->signal(SIGTERM);
  auto code = process_->wait_for(std::chrono::seconds(60));
  if (!code) process_->signal(SIGKILL);
  process_.reset();
  return code;
}

std::optional<std::uint64_t> SoakServer::rss_kib() const {
  if (!process_) return std::nullopt;
  return soak::rss_kib(process_->pid());
}

std::string SoakServer::metrics() const {
  return http_get(admin_port_, "/metrics").value_or("");
}

}  // namespace parley::soak
