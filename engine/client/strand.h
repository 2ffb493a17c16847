// The executor every part of a HubClient runs on: a strand over the
// executor the embedder gives (internal to the client library).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

namespace parley::client {

using Strand = boost::asio::strand<boost::asio::any_io_executor>;

}  // namespace parley::client
