#include "tests/test_support.h"

#include <flatbuffers/flexbuffers.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "parley/schemas/log_generated.h"
#include "schemas/record.h"

namespace parley::testing {

std::string text_record(std::string_view channel, std::string_view text) {
  flexbuffers::Builder data;
  data.Map([&] { data.String("text", std::string(text)); });
  data.Finish();
  return schema::build_envelope_record({
      .channel_id = channel,
      .sender_id = "18ea415ef6a36d322e5068cfe782b291",
      .event_type = "ag2.msg.text",
      .event_data = data.GetBuffer(),
      .envelope_id = "18ea415ef6bf60ef829f7f6b08b41809",
      .created_at = "2026-01-01T00:00:00+00:00",
  });
}

std::string text_of(std::string_view record) {
  const auto* envelope = schema::GetRecord(record.data())->body_as_Envelope();
  if (envelope == nullptr) throw std::logic_error("not an envelope record");
  return envelope->event_data_flexbuffer_root()
      .AsMap()["text"]
      .AsString()
      .str();
}

log::AppendEntry text_entry(std::string_view channel, std::string_view text,
                            std::string_view idempotency_key) {
  return {.record = text_record(channel, text),
          .channel = std::string(channel),
          .idempotency_key = std::string(idempotency_key)};
}

void forget_clean_close(const std::filesystem::path& dir) {
  std::filesystem::remove(dir / "PARLEY-CLEAN-CLOSE");
}

ScratchDir::ScratchDir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "parley-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed for " + pattern);
  }
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::uint64_t random_seed() {
  const char* fixed = std::getenv("PARLEY_TEST_SEED");
  if (fixed != nullptr && *fixed != '\0') return std::stoull(fixed);
  std::random_device device;
  return std::uint64_t{device()} << 32 | device();
}

CommandRun run_command(const std::string& command) {
  ScratchDir scratch;
  const std::filesystem::path err = scratch.path() / "stderr";
  const std::string shell =
      "( " + command + " ) 2>" + err.string() + " </dev/null";
  FILE* pipe = popen(shell.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  CommandRun run;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) {
    run.out.append(buffer, n);
  }
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  run.err = text.str();
  return run;
}

}  // namespace parley::testing
