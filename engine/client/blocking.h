// A blocking convenience for tests, examples and simple programs: an
// io_context run by one background thread, and wait(), which starts an
// asynchronous client call and blocks the calling thread for its outcome.
//
// wait() must not be called on the io thread (it would wait for itself).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <future>
#include <memory>
#include <utility>

#include "engine/client/error.h"

namespace parley::client {

// Runs an io_context on one thread from construction to destruction.
class IoThread {
 public:
  IoThread();
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;
  // Lets the handlers already queued run (up to 5 s), then stops the
  // io_context and joins the thread; work queued later is dropped.
  ~IoThread();

  boost::asio::any_io_executor executor() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Calls `start(handler)` and returns what the handler is told.
// Usage: auto passport = wait<Passport>([&](auto done) {
//          hub->get_agent("bob", done); });
template <typename T, typename Start>
Result<T> wait(Start&& start) {
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  std::forward<Start>(start)(Handler<T>(
      [promise](Result<T> result) { promise->set_value(std::move(result)); }));
  return future.get();
}

class HubClient;

// Closes `client` and returns once the close has run on its strand (its
// pending calls told kClosed, so a turn in flight lets go of its agent).
// For a program's shutdown, before the executor stops.
void close_and_wait(HubClient& client);

}  // namespace parley::client
