// Who sends a request over the wire: the agents bound to its connection
// (by `register` or `hello`). The op layer checks every wire request against
// them before the hub runs it; in-process callers pass no Caller and are
// not checked.
//
// Thread safety: implementations answer from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace parley::engine {

class Caller {
 public:
  virtual ~Caller() = default;
  // Whether `agent_id` is bound to this connection now.
  virtual bool holds(std::string_view agent_id) const = 0;
  // The agent ids bound to this connection now, sorted.
  virtual std::vector<std::string> bound_agents() const = 0;
};

}  // namespace parley::engine
