// What a crash-campaign child tells its parent, one line per event on its
// stdout, each written with one write(2) so that a SIGKILL never leaves half
// a line (lines stay below PIPE_BUF):
//
//   phase <name>                 hydrating, ready, sweep-begin, sweep-end
//   ack <stream> <token>         the hub acknowledged the record named
//                                <token> (tests/crashtest/record_token.h);
//                                stream m: the driver's own ops, i: invitees'
//                                answers, s: records of a sweep. Within a
//                                stream, acks come in log order.
//   idem <channel> <sender> <key> <envelope_id>
//                                an acknowledged idempotent text post whose
//                                event_data is {"text": <key>}
//   clock <microseconds>         the driver's clock moved to this time
//   violation <what>             the hub broke a contract the child checks
//                                itself (an idempotent retry answered with
//                                another envelope)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace parley::crashtest {

// Writes `line` and a newline in one write(2); exits the process (status 3)
// when the parent is gone.
void send_line(std::string_view line);

struct IdempotentPost {
  std::string channel;
  std::string sender;
  std::string key;
  std::string envelope_id;
};

struct AckedToken {
  char stream = 'm';
  std::string token;
};

// What a child's whole output said (an incomplete last line is ignored).
struct ChildReport {
  std::vector<std::string> phases;
  std::vector<AckedToken> acks;
  std::vector<IdempotentPost> idempotent;
  std::vector<std::string> violations;
  std::int64_t clock_micros = 0;  // 0: never moved
  bool saw(std::string_view phase) const;
  // How many times `phase` was reported.
  std::size_t count(std::string_view phase) const;
};

ChildReport parse_child_output(std::string_view output);

}  // namespace parley::crashtest
