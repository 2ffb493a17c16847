// Follows a LogStore: delivers every record from a log sequence on, in
// order, with no gap and no repeat, first those already in the log, then
// each one as it is appended. For `--follow` and live subscribers.
#pragma once

#include <cstdint>
#include <functional>
#include <thread>

#include "log/log_store.h"

namespace parley::log {

class Tail {
 public:
  using ErrorHandler = std::function<void(const Error&)>;

  // `store` must outlive the Tail. Nothing runs until start().
  Tail(const LogStore& store, std::uint64_t from, RecordVisitor on_record,
       ErrorHandler on_error)
      : store_(store),
        next_(from == 0 ? 1 : from),
        on_record_(std::move(on_record)),
        on_error_(std::move(on_error)) {}
  Tail(const Tail&) = delete;
  Tail& operator=(const Tail&) = delete;
  ~Tail() { stop(); }

  // Starts delivering on a thread of the Tail's own. Delivery ends when
  // on_record returns false, a read fails (on_error is called once), the
  // store closes, or stop() is called.
  void start();

  // Waits for the delivery thread to end; no callback runs after it returns.
  void stop();

 private:
  void run(std::stop_token stop);

  const LogStore& store_;
  std::uint64_t next_;
  RecordVisitor on_record_;
  ErrorHandler on_error_;
  std::jthread thread_;
};

}  // namespace parley::log
