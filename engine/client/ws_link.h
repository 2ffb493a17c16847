// The WebSocket link: AG2's frames over one WebSocket (ws://, or wss://
// with the checks of tls_trust.h) to `parley serve` or AG2's own hub, with
// Boost.Beast on the HubClient's strand. Requests are matched to responses by
// request_id; hellos are answered first in, first out (welcome or error), as
// AG2's client does; notify frames become on_notify events; an application ping
// is answered with a pong. A frame that is not JSON or has an unknown kind is
// logged and skipped, as AG2 does.
//
// Threading: as Link; every Beast operation runs on the strand.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/client/link.h"
#include "engine/client/strand.h"
#include "engine/client/tls_trust.h"

namespace parley::client {

// ws://HOST:PORT[/PATH] or wss://HOST:PORT[/PATH].
struct WsUrl {
  std::string host;
  std::string port;
  std::string target = "/";
  bool tls = false;  // wss://
};
Result<WsUrl> parse_ws_url(std::string_view url);

// Makes an unopened link to `url` (`tls` is required for wss:// and unused
// for ws://); `log` receives one line per skipped frame or lost connection.
std::shared_ptr<Link> make_ws_link(Strand strand, WsUrl url,
                                   std::shared_ptr<TlsTrust> tls,
                                   std::weak_ptr<LinkEvents> events,
                                   std::function<void(std::string_view)> log);

}  // namespace parley::client
