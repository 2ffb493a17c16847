// A WebSocket session, plain (ws://) or TLS (wss://): the socket side of a
// Connection. Handshakes with Beast (TLS, then WebSocket), then frames the
// messages itself (ws_frames.h): hands each message to the Connection (text
// or binary alike, as AG2 decodes binary messages as UTF-8), writes the
// send queue several frames per write, answers pings, keeps the connection
// alive with pings of its own, and closes.
//
// Everything runs on the socket's strand (accept it with a strand
// executor).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <memory>

#include "engine/transport/socket_slots.h"

namespace boost::asio::ssl {
class context;
}

namespace parley::transport {

class Connection;
struct ServerContext;

// Starts a session on an accepted `socket`: TLS when `tls` is not null
// (it must outlive the session). The session keeps itself alive until its
// socket closes, and gives `slot` back when it closes the socket.
std::shared_ptr<Connection> start_session(boost::asio::ip::tcp::socket socket,
                                          SocketSlots::Slot slot,
                                          boost::asio::ssl::context* tls,
                                          ServerContext& context);

}  // namespace parley::transport
