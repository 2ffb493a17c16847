// parley-example-gateway: an agent that forwards the texts it is sent to a
// queue another part of the program drains (a bridge to a message broker,
// a UI, a log).
//
//   parley-example-gateway [--url ws://HOST:PORT] [--messages N]
//
// The gateway is an AgentClient whose handler is replaced: a text from
// someone else is pushed onto the queue and acked only then (so the hub
// redelivers what a crash lost); everything else goes to the default
// handler, which acks the invite. A human opens a conversation to it and
// sends N texts; the main thread takes them off the queue. Prints each;
// exits 0 when all N arrived in order, 1 otherwise. Without --url both run
// on an in-process hub.
#include <CLI/CLI.hpp>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>

#include "engine/client/default_handler.h"
#include "engine/client/envelopes.h"
#include "tools/examples/example_support.h"

namespace {

using namespace parley;
using namespace std::chrono_literals;
using client::Envelope;
using examples::need;

// A queue filled on the client's strand and drained by the main thread.
class Forwarded {
 public:
  void push(std::string line) {
    {
      std::lock_guard lock(mutex_);
      lines_.push_back(std::move(line));
    }
    changed_.notify_all();
  }
  // The next line, or nullopt after `timeout`.
  std::optional<std::string> pop(std::chrono::seconds timeout) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, timeout, [&] { return !lines_.empty(); })) {
      return std::nullopt;
    }
    std::string line = std::move(lines_.front());
    lines_.pop_front();
    return line;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> lines_;
};

int run(const std::string& url, int messages) {
  examples::ExampleNetwork network(url);
  auto queue = std::make_shared<Forwarded>();
  const auto gateway = examples::register_headless(network, "gateway");
  gateway->on_envelope(
      [self = gateway.get(), queue](const Envelope& envelope,
                                    client::Handler<void> done) {
        if (envelope.event_type != client::event_type::kText ||
            envelope.sender_id == self->agent_id()) {
          return client::default_handler(envelope, *self, std::move(done));
        }
        queue->push(envelope.sender_id + ": " + client::text_of(envelope));
        done({});
      });
  const auto human = examples::register_human(network, "writer");

  const auto channel = examples::open_channel(
      *human, {.type = "conversation", .targets = {gateway->passport().name}});
  std::vector<std::string> sent;
  for (int i = 1; i <= messages; ++i) {
    const std::string text = "message " + std::to_string(i);
    examples::say(*human, channel.channel_id, text);
    sent.push_back(human->agent_id() + ": " + text);
  }

  int exit_code = 0;
  for (const std::string& expected : sent) {
    const auto line = queue->pop(30s);
    if (!line) {
      std::cout << "queue: nothing more arrived\n";
      exit_code = 1;
      break;
    }
    std::cout << "queue <- " << *line << '\n';
    if (*line != expected) exit_code = 1;
  }
  need(client::wait<client::ChannelMetadata>(
           [&](auto done) { human->close_channel(channel.channel_id, done); }),
       "close the conversation");
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"An agent that forwards the texts it is sent to a queue"};
  std::string url;
  int messages = 3;
  app.add_option("--url", url, "ws://HOST:PORT of a hub (default: in-process)");
  app.add_option("--messages", messages, "how many texts the human sends")
      ->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  try {
    return run(url, messages);
  } catch (const std::exception& e) {
    std::cerr << "parley-example-gateway: " << e.what() << '\n';
    return 1;
  }
}
