#include "engine/client/blocking.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>

namespace parley::client {

namespace net = boost::asio;

struct IoThread::Impl {
  net::io_context io;
  net::executor_work_guard<net::io_context::executor_type> work =
      net::make_work_guard(io);
  std::thread thread{[this] { io.run(); }};
};

IoThread::IoThread() : impl_(std::make_unique<Impl>()) {}

IoThread::~IoThread() {
  impl_->work.reset();
  impl_->io.stop();
  impl_->thread.join();
}

net::any_io_executor IoThread::executor() const {
  return impl_->io.get_executor();
}

}  // namespace parley::client
