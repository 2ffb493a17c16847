// What the example programs share: the hub their clients reach, either
// `parley serve` (or AG2's hub) at a ws:// URL or, without one, an
// in-process hub on a temporary store removed on exit; `need`, which turns
// a failed step into an exception naming it (main prints it and exits 1);
// and the steps every example takes, each through `need`.
//
// Lifetime: the ExampleNetwork closes every connection it made before it
// stops its io thread (a turn still in flight keeps its AgentClient, and
// with it the connection, alive; only close() lets go of it).
#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/client/agent_client.h"
#include "engine/client/blocking.h"
#include "engine/client/hub_client.h"
#include "engine/client/human_client.h"
#include "engine/hub/hub.h"

namespace parley::examples {

class ExampleNetwork {
 public:
  // An empty `url`: the in-process hub. Throws when the store cannot open.
  explicit ExampleNetwork(std::string url);
  ~ExampleNetwork();
  ExampleNetwork(const ExampleNetwork&) = delete;
  ExampleNetwork& operator=(const ExampleNetwork&) = delete;

  // A new connection to the hub; throws when it cannot connect.
  std::shared_ptr<client::HubClient> connect();
  boost::asio::any_io_executor executor() const { return io_.executor(); }

 private:
  // A directory removed when destroyed: after the hub closed.
  struct TempDir {
    std::filesystem::path path;  // empty: none
    ~TempDir();
  };

  std::string url_;
  std::vector<std::weak_ptr<client::HubClient>> clients_;
  TempDir dir_;  // the in-process hub's store
  std::unique_ptr<engine::Hub> hub_;
  // Declared after the hub, so destroyed before it: the clients' closes,
  // posted to it as they go, still reach a live (closed) hub.
  client::IoThread io_;
};

template <typename T>
T need(client::Result<T> result, std::string_view what) {
  if (!result) {
    throw std::runtime_error(std::string(what) + ": " + result.error().code +
                             ": " + result.error().message);
  }
  if constexpr (!std::is_void_v<T>) return std::move(*result);
}

// A name unique to this process: `prefix` and the process id.
std::string unique_name(std::string_view prefix);

// A human on a connection of its own, named unique_name(prefix).
std::shared_ptr<client::HumanClient> register_human(ExampleNetwork& network,
                                                    std::string_view prefix);

// An agent whose handler the caller replaces: no model is ever called and
// no plugin tools are offered. Named unique_name(prefix).
std::shared_ptr<client::AgentClient> register_headless(ExampleNetwork& network,
                                                       std::string_view prefix);

// `human` opens a channel of `type` to `targets` (names) and says so.
client::ChannelMetadata open_channel(client::HumanClient& human,
                                     client::OpenRequest request);

// `human` posts `text` into `channel_id` and says so.
void say(client::HumanClient& human, const std::string& channel_id,
         const std::string& text);

// The next envelope in `channel_id` of one of `types` delivered to `human`
// (others are discarded, as next_envelope does), within 30 s.
client::Envelope next_in_channel(client::HumanClient& human,
                                 const std::string& channel_id,
                                 std::vector<std::string_view> types);

// Prints the close in `closed`'s data; true when its reason is `reason`.
bool closed_with(const client::Envelope& closed, std::string_view reason);

// `human` asks `target` (a name) `question` on a consulting channel and
// prints the reply; 0 when the hub then closed the channel with
// consulting_complete, else 1.
int consult(client::HumanClient& human, const std::string& target,
            const std::string& question);

}  // namespace parley::examples
