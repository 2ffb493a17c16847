#include "tests/crashtest/ack_channel.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace parley::crashtest {

void send_line(std::string_view line) {
  std::string buffer(line);
  buffer.push_back('\n');
  if (write(STDOUT_FILENO, buffer.data(), buffer.size()) !=
      static_cast<ssize_t>(buffer.size())) {
    std::_Exit(3);
  }
}

bool ChildReport::saw(std::string_view phase) const { return count(phase) > 0; }

std::size_t ChildReport::count(std::string_view phase) const {
  return static_cast<std::size_t>(std::ranges::count(phases, phase));
}

ChildReport parse_child_output(std::string_view output) {
  ChildReport report;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = output.find('\n', start);
    if (end == std::string_view::npos) break;  // incomplete: never sent
    const std::string_view line = output.substr(start, end - start);
    start = end + 1;
    const std::size_t space = line.find(' ');
    const std::string_view verb = line.substr(0, space);
    const std::string_view rest =
        space == std::string_view::npos ? "" : line.substr(space + 1);
    if (verb == "phase") {
      report.phases.emplace_back(rest);
    } else if (verb == "ack" && rest.size() > 2) {
      report.acks.push_back({rest[0], std::string(rest.substr(2))});
    } else if (verb == "idem") {
      std::istringstream fields{std::string(rest)};
      IdempotentPost post;
      if (fields >> post.channel >> post.sender >> post.key >>
          post.envelope_id) {
        report.idempotent.push_back(std::move(post));
      }
    } else if (verb == "clock") {
      report.clock_micros =
          std::strtoll(std::string(rest).c_str(), nullptr, 10);
    } else if (verb == "violation") {
      report.violations.emplace_back(rest);
    }
  }
  return report;
}

}  // namespace parley::crashtest
