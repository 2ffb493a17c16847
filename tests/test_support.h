// Helpers shared by the test suites: records with a readable payload, and
// scratch directories.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "log/log_store.h"

namespace parley::testing {

// The error message of a failed `result`, or "" when it holds a value: for
// the message of a *_MESSAGE assertion, which doctest also evaluates when
// the assertion passes (with -s), where `result.error()` would be
// undefined behaviour.
template <typename Result>
std::string error_message(const Result& result) {
  return result ? std::string() : result.error().message;
}

// A valid envelope record in `channel` whose event_data is {"text": text}.
std::string text_record(std::string_view channel, std::string_view text);

// event_data.text of an envelope record (read through FlexBuffers).
std::string text_of(std::string_view record);

// An entry for LogStore::append indexed under `channel` and `key`.
log::AppendEntry text_entry(std::string_view channel, std::string_view text,
                            std::string_view idempotency_key = {});

// What a shell command printed, and how it ended.
struct CommandRun {
  int exit_code = -1;  // -1 when it did not exit normally
  std::string out;     // stdout
  std::string err;     // stderr
};

// The seed of a randomized test: PARLEY_TEST_SEED when set (to rerun a
// failure), else a fresh random one. Callers print it.
std::uint64_t random_seed();

// Runs `command` through /bin/sh with stdin from /dev/null.
CommandRun run_command(const std::string& command);

// Leaves the closed RocksDB store in `dir` as a crash would have: without
// its clean-close mark (log/rocksdb_clean_close.h), so that a torn WAL
// tail made afterwards is tolerated as a crash's.
void forget_clean_close(const std::filesystem::path& dir);

// A fresh directory under the system temp dir, removed with its contents
// when the object goes.
class ScratchDir {
 public:
  ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace parley::testing
