#include "engine/client/blocking.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <thread>

#include "engine/client/hub_client.h"
#include "log/thread_name.h"

namespace parley::client {

namespace net = boost::asio;

struct IoThread::Impl {
  net::io_context io;
  net::executor_work_guard<net::io_context::executor_type> work =
      net::make_work_guard(io);
  std::thread thread{[this] {
    log::name_current_thread("parley-client");
    io.run();
  }};
};

IoThread::IoThread() : impl_(std::make_unique<Impl>()) {}

void close_and_wait(HubClient& client) {
  client.close();
  // Posted after the close on the same strand: runs once the close has.
  (void)wait<void>([&](Handler<void> done) {
    net::post(client.executor(), [done] { done({}); });
  });
}

IoThread::~IoThread() {
  // Handlers queued before now (a client's close, posted by its destructor)
  // run first, so no client is left half-open; a stuck io thread is given
  // up on after a few seconds.
  auto drained = std::make_shared<std::promise<void>>();
  net::post(impl_->io, [drained] { drained->set_value(); });
  drained->get_future().wait_for(std::chrono::seconds(5));
  impl_->work.reset();
  impl_->io.stop();
  impl_->thread.join();
}

net::any_io_executor IoThread::executor() const {
  return impl_->io.get_executor();
}

}  // namespace parley::client
