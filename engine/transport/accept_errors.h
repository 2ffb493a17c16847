// How the server's accept loops read a failed accept().
#pragma once

#include <boost/asio/error.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>

namespace parley::transport {

// How long an accept loop waits after accept() failed for want of a
// resource that only closing connections frees.
inline constexpr std::chrono::milliseconds kAcceptRetryDelay{100};

// Whether accept() failed for want of file descriptors or memory: the
// connection stays in the kernel's backlog, so accepting again at once
// would fail again at once. Other failures concern one connection only.
inline bool accept_exhausted(const boost::system::error_code& error) {
  namespace error_ns = boost::asio::error;
  return error == error_ns::no_descriptors || error == error_ns::no_memory ||
         error == error_ns::no_buffer_space ||
         error == boost::system::errc::too_many_files_open_in_system;
}

}  // namespace parley::transport
