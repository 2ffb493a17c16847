// The hub fuzz_ops drives: one per process, on an in-memory log store with
// a manual clock, opened with a prelude of agents (a0..a4, alice, bob,
// carol), channels of every type (c1..c4, ask, chat, talk, flow), a posted
// envelope (e1) and a task (task-report). A request line names them as
// "$a0", "$c1", ... (the `parley exec` bindings, so lines of the golden
// scripts are meaningful requests). Invitees ack every invite at once.
//
// Thread safety: none; one request at a time (the fuzzer's thread).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/base/clock.h"
#include "engine/hub/hub.h"
#include "engine/ops/control_plane.h"
#include "log/log_store.h"

namespace parley::fuzz {

class OpHub {
 public:
  // The log is folded and compared with the live hub, then the hub is
  // opened anew, once it holds this many records.
  static constexpr std::uint64_t kResetAfterRecords = 4000;

  OpHub();
  ~OpHub();
  OpHub(const OpHub&) = delete;
  OpHub& operator=(const OpHub&) = delete;

  // One request line {"op", "params", "caller"} through the op layer, as a
  // connection of `parley serve` runs it ("caller": the agents bound to the
  // connection, a wire request; absent: an in-process call). Returns the
  // response frame the server would send. Checks the invariants
  // (tests/fuzz/fuzz_ops.cc) and aborts when one fails.
  std::string request(std::string_view line);

  // Aborts unless the live hub's agents, channels (metadata and adapter
  // state) and tasks equal a fresh fold of its log.
  void check_against_fold() const;

 private:
  void open();
  nlohmann::json run_prelude_line(const std::string& line);
  void substitute(nlohmann::json& value) const;

  std::shared_ptr<engine::ManualClock> clock_;
  std::shared_ptr<log::LogStore> store_;
  std::unique_ptr<engine::Hub> hub_;
  std::unique_ptr<engine::ControlPlane> ops_;
  std::map<std::string, std::string, std::less<>> bindings_;
};

}  // namespace parley::fuzz
