// The process's limit on open file descriptors (RLIMIT_NOFILE), which a
// server's sockets and its log's files share.
//
// Any thread.
#pragma once

#include <cstddef>

namespace parley::transport {

// The soft limit in force; 1024 (Linux's usual default) when it cannot be
// read, and at most what a std::size_t holds when it is unlimited.
std::size_t open_file_limit();

// Raises the soft limit to the hard limit, as far as the kernel allows,
// and returns the soft limit then in force. Best effort: a refusal leaves
// the limit as it was.
std::size_t raise_open_file_limit();

}  // namespace parley::transport
