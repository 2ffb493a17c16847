// fuzz_exec: a `parley exec` script (JSON lines of control-plane ops and
// the script's own: invitee, clock.set, clock.advance, sweep, restart,
// state) through tools/script_runner on an in-memory log store that
// survives `restart`; a fresh hub per input.
//
// Asserts: every non-blank, non-comment line yields one output line that
// parses as a JSON object with a boolean "ok" (an error line has an
// error_code and a message); after the script, the hub (when open) serves
// what a fresh fold of its log gives (tests/fuzz/hub_check.h), and a hub
// reopened on the log opens.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "log/memory_log_store.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/hub_check.h"
#include "tests/fuzz/keep_open_store.h"
#include "tools/script_runner.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace parley;
  std::shared_ptr<log::LogStore> store = log::make_memory_log_store();
  auto runner = engine::ScriptRunner::start(
      [&]() -> engine::Result<std::shared_ptr<log::LogStore>> {
        return fuzz::keep_open(store);
      });
  FUZZ_CHECK(runner.has_value(), "a script runner on a memory store fails: " +
                                     runner.error().message);
  const std::string_view script(reinterpret_cast<const char*>(data), size);
  for (std::size_t at = 0; at <= script.size();) {
    std::size_t end = script.find('\n', at);
    if (end == std::string_view::npos) end = script.size();
    const std::string_view line = script.substr(at, end - at);
    at = end + 1;
    const auto output = (*runner)->run_line(line);
    if (!output) continue;
    FUZZ_CHECK(output->find('\n') == std::string::npos,
               "an output line spans lines: " + *output);
    const auto value = nlohmann::json::parse(*output, nullptr, false);
    FUZZ_CHECK(
        value.is_object() && value.contains("ok") && value["ok"].is_boolean(),
        "an output line is not a JSON result: " + *output);
    if (value["ok"] == false) {
      FUZZ_CHECK(
          value.contains("error_code") && value.contains("error_message"),
          "an error line without its code: " + *output);
    }
  }
  if (const engine::Hub* hub = (*runner)->hub()) {
    fuzz::check_hub_against_log(*hub, *store);
  }
  return 0;
}
