// fuzz_ops: one request line {"op", "params", "caller"} through the op
// layer (engine::ControlPlane) of one hub per process on an in-memory log
// store (tests/fuzz/op_hub.h: a prelude of agents, channels of every type
// and a task, named "$a0", "$c1", ...; the hub is checked against a fold
// of its log and opened anew every few thousand records).
//
// Asserts: every request yields exactly one response frame, one line that
// parses as a JSON response whose "ok" says whether the op succeeded;
// wire_result keeps the result's value; a refusal has a message, and a
// malformed argument (kInvalid) or an authorization denial writes nothing;
// the log never refuses what the op layer accepted (no kStorage on a
// memory store); and the live hub equals a fresh fold of its log.
#include <cstdint>
#include <string_view>

#include "tests/fuzz/op_hub.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  static parley::fuzz::OpHub hub;
  (void)hub.request({reinterpret_cast<const char*>(data), size});
  return 0;
}
