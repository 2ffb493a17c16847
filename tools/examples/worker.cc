// parley-example-worker: a headless worker, an agent without a model.
//
//   parley-example-worker [--url ws://HOST:PORT] [--text TEXT]
//
// The worker is an AgentClient whose handler is replaced: it answers each
// text it is sent with a word count, and hands everything else (the
// invite, lifecycle envelopes) to the default handler, which acks the
// invite. A human opens a consulting channel to it and sends `text`.
// Prints what they exchanged; exits 0 when the channel closed with
// consulting_complete, 1 otherwise. Without --url both run on an
// in-process hub.
#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>

#include "engine/client/default_handler.h"
#include "engine/client/envelopes.h"
#include "tools/examples/example_support.h"

namespace {

using namespace parley;
using client::Envelope;
using client::event_type::kText;

std::string count_words(std::string_view text) {
  std::istringstream words{std::string(text)};
  std::size_t count = 0;
  for (std::string word; words >> word;) ++count;
  return std::to_string(count) + (count == 1 ? " word" : " words");
}

int run(const std::string& url, const std::string& text) {
  examples::ExampleNetwork network(url);
  const auto worker = examples::register_headless(network, "counter");
  // The handler holds the client by raw pointer: the client owns it.
  worker->on_envelope([self = worker.get()](const Envelope& envelope,
                                            client::Handler<void> done) {
    if (envelope.event_type != kText ||
        envelope.sender_id == self->agent_id()) {
      return client::default_handler(envelope, *self, std::move(done));
    }
    self->send(
        envelope.channel_id, count_words(client::text_of(envelope)),
        [done](client::Result<std::string> sent) {
          if (!sent) return done(std::unexpected(sent.error()));
          done({});
        },
        std::nullopt, envelope.envelope_id);
  });
  const auto human = examples::register_human(network, "asker");

  return examples::consult(*human, worker->passport().name, text);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A headless worker answering without a model"};
  std::string url;
  std::string text = "count the words in this sentence";
  app.add_option("--url", url, "ws://HOST:PORT of a hub (default: in-process)");
  app.add_option("--text", text, "what the human sends");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(url, text);
  } catch (const std::exception& e) {
    std::cerr << "parley-example-worker: " << e.what() << '\n';
    return 1;
  }
}
