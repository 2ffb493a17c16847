#include "tests/soak/process_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <stdexcept>

namespace parley::soak {
namespace {

// A socket closed when it goes out of scope.
struct Socket {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

}  // namespace

std::optional<std::uint64_t> rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with("VmRSS:")) continue;
    std::uint64_t kib = 0;
    const char* at = line.data() + line.find_first_of("0123456789");
    std::from_chars(at, line.data() + line.size(), kib);
    return kib;
  }
  return std::nullopt;
}

std::optional<std::string> http_get(std::uint16_t port, std::string_view path) {
  Socket socket;
  if (socket.fd < 0) return std::nullopt;
  const timeval timeout{.tv_sec = 1, .tv_usec = 0};
  setsockopt(socket.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(socket.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  const sockaddr_in address = loopback(port);
  if (::connect(socket.fd, reinterpret_cast<const sockaddr*>(&address),
                sizeof address) != 0) {
    return std::nullopt;
  }
  const std::string request =
      "GET " + std::string(path) + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::send(socket.fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return std::nullopt;
  }
  std::string answer;
  char buffer[16384];
  for (ssize_t got; (got = ::recv(socket.fd, buffer, sizeof buffer, 0)) > 0;) {
    answer.append(buffer, static_cast<std::size_t>(got));
  }
  const std::size_t body = answer.find("\r\n\r\n");
  if (!answer.starts_with("HTTP/1.") || answer.find(" 200 ") > 12 ||
      body == std::string::npos) {
    return std::nullopt;
  }
  return answer.substr(body + 4);
}

std::optional<double> metric(std::string_view metrics, std::string_view name) {
  for (std::size_t at = 0; at < metrics.size();) {
    std::size_t end = metrics.find('\n', at);
    if (end == std::string_view::npos) end = metrics.size();
    const std::string_view line = metrics.substr(at, end - at);
    at = end + 1;
    if (line.size() > name.size() && line.starts_with(name) &&
        line[name.size()] == ' ') {
      return std::stod(std::string(line.substr(name.size() + 1)));
    }
  }
  return std::nullopt;
}

std::uint16_t free_loopback_port() {
  Socket socket;
  sockaddr_in address = loopback(0);
  socklen_t length = sizeof address;
  if (socket.fd < 0 ||
      ::bind(socket.fd, reinterpret_cast<const sockaddr*>(&address),
             sizeof address) != 0 ||
      ::getsockname(socket.fd, reinterpret_cast<sockaddr*>(&address),
                    &length) != 0) {
    throw std::runtime_error("no free loopback port");
  }
  return ntohs(address.sin_port);
}

}  // namespace parley::soak
