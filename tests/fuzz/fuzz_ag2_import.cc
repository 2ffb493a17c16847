// fuzz_ag2_import: one file of AG2's on-disk layout through `parley
// import-ag2` (replay::import_ag2) into an in-memory store. The first byte
// picks the file kind (tests/fuzz/ag2_skeleton.h: passport, resume, rule,
// SKILL.md, inbox cursors, channel metadata, WAL, audit log, task
// metadata, task checkpoint), the rest is the file; the files that kind
// needs around it come from the golden AG2 store. Each kind has a layout
// of its own under a scratch directory (on /dev/shm when there is one);
// only the fuzzed file is rewritten per input.
//
// Asserts: the import never throws; a refused import has a message and
// wrote nothing; an accepted one wrote exactly the records its report
// counts, and they fold.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "log/memory_log_store.h"
#include "replay/ag2_import.h"
#include "replay/folded_store.h"
#include "tests/fuzz/ag2_skeleton.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, std::string_view bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  FUZZ_CHECK(out.good(), "cannot write " + path.string());
}

// One layout per file kind, made on first use, removed at exit.
class Layouts {
 public:
  Layouts() {
    const fs::path shm = "/dev/shm";
    const fs::path base =
        access(shm.c_str(), W_OK) == 0 ? shm : fs::temp_directory_path();
    root_ = base / ("parley-fuzz-ag2-" + std::to_string(getpid()));
    fs::remove_all(root_);
    for (std::size_t i = 0; i < parley::fuzz::kAg2FileKinds.size(); ++i) {
      for (const auto& [path, bytes] : parley::fuzz::kAg2FileKinds[i].around) {
        if (!path.empty()) write_file(layout(i) / path, bytes);
      }
    }
  }
  ~Layouts() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  fs::path layout(std::size_t kind) const {
    return root_ / std::to_string(kind);
  }

 private:
  fs::path root_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace parley;
  static const Layouts layouts;
  if (size == 0) return 0;
  const std::size_t kind = data[0] % fuzz::kAg2FileKinds.size();
  const fs::path root = layouts.layout(kind);
  write_file(root / fuzz::kAg2FileKinds[kind].path,
             {reinterpret_cast<const char*>(data) + 1, size - 1});

  auto store = log::make_memory_log_store();
  auto report = replay::import_ag2(root, *store);
  if (!report) {
    FUZZ_CHECK(!report.error().message.empty(), "a refusal without a message");
    FUZZ_CHECK(store->last_sequence() == 0,
               "a refused import (" + report.error().message + ") wrote " +
                   std::to_string(store->last_sequence()) + " records");
    return 0;
  }
  const std::uint64_t counted = report->agents + report->channels +
                                report->envelopes + report->audit_records +
                                report->cursors + report->task_records;
  FUZZ_CHECK(store->last_sequence() == counted,
             "the import wrote " + std::to_string(store->last_sequence()) +
                 " records, its report counts " + std::to_string(counted));
  auto folded = replay::FoldedStore::fold(*store);
  FUZZ_CHECK(folded.has_value(),
             "an accepted import does not fold: " + folded.error().message);
  return 0;
}
