#include "log/tail.h"

#include "log/thread_name.h"

namespace parley::log {
namespace {
// How long a wait may last before the thread looks at its stop token.
constexpr std::chrono::milliseconds kPoll{50};
}  // namespace

void Tail::start() {
  thread_ = std::jthread([this](std::stop_token stop) {
    name_current_thread("parley-tail");
    run(stop);
  });
}

void Tail::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

void Tail::run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    bool keep_going = true;
    auto read = store_.read(
        next_, kLastSequence,
        [&](std::uint64_t sequence, std::string_view record) {
          keep_going = !stop.stop_requested() && on_record_(sequence, record);
          next_ = sequence + 1;
          return keep_going;
        });
    if (!read) {
      if (read.error().code != ErrorCode::kClosed) on_error_(read.error());
      return;
    }
    if (!keep_going) return;
    store_.wait_for_append(next_ - 1, kPoll);
  }
}

}  // namespace parley::log
