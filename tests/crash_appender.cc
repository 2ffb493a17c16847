// Child process of crash_test: appends to a RocksDB store with sync
// durability from several threads until it is killed, and reports every
// acked append on stdout as one line "<log sequence> <text>\n", where text
// is "<generation>:<thread>:<counter>". A thread's counter goes 0, 1, 2, ...
// and it appends counter k+1 only after k was acked.
//
// usage: crash_appender DIR GENERATION THREADS
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "log/rocksdb_log_store.h"
#include "tests/test_support.h"

namespace {

// One write(2) per line: lines shorter than PIPE_BUF never interleave or
// tear, so the parent sees whole lines even when it kills us mid-loop.
void report(const std::string& line) {
  if (write(STDOUT_FILENO, line.data(), line.size()) !=
      static_cast<ssize_t>(line.size())) {
    std::_Exit(3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: crash_appender DIR GENERATION THREADS\n");
    return 64;
  }
  const std::string generation = argv[2];
  const int threads = std::atoi(argv[3]);
  auto opened = parley::log::open_rocksdb_log_store(argv[1]);
  if (!opened) {
    std::fprintf(stderr, "crash_appender: %s\n",
                 opened.error().message.c_str());
    return 1;
  }
  parley::log::LogStore& store = *opened->store;
  report("ready\n");
  std::vector<std::jthread> appenders;
  for (int t = 0; t < threads; ++t) {
    appenders.emplace_back([&, t] {
      for (long k = 0;; ++k) {
        std::string text =
            generation + ":" + std::to_string(t) + ":" + std::to_string(k);
        std::vector<parley::log::AppendEntry> batch{
            parley::testing::text_entry("crash", text)};
        auto appended = store.append(batch);
        if (!appended) {
          std::fprintf(stderr, "crash_appender: %s\n",
                       appended.error().message.c_str());
          std::_Exit(2);
        }
        report(std::to_string((*appended)[0].log_sequence) + " " + text + "\n");
      }
    });
  }
}
