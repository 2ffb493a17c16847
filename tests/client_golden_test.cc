// The C++ client against AG2's hub as recorded (golden/ag2-wire-trace.jsonl,
// every frame between AG2's remote client and AG2's Python hub). A
// WebSocket server in the test plays AG2's hub for the trace's first
// connection, a human that opens four channels, posts in them and reads
// them back: it answers each request with the response AG2's hub gave the
// recorded request of the same op (the next one in order, its request_id
// replaced), then sends the notifies AG2's hub sent after that response.
// The C++ HubClient is driven through the same calls with the recorded
// arguments.
//
// Asserts, frame by frame: each request carries the params AG2's client
// sent, in a frame whose keys are AG2's in AG2's order (a param AG2's client
// sent as null or at the op's default may be left out); each answer reads
// into the client's record without loss (its JSON is the recorded result);
// each notify reaches the agent's handler as recorded; and each receipt is
// the one AG2's client sent.
#include <doctest/doctest.h>
#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "engine/client/blocking.h"
#include "engine/client/hub_client.h"
#include "engine/json/records_json.h"
#include "tests/client_networks.h"

namespace parley::testing {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
using client::wait;
using nlohmann::json;
using nlohmann::ordered_json;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

constexpr int kConnection = 1;

struct TraceFrame {
  bool from_client = false;
  ordered_json frame;
};

std::vector<TraceFrame> recorded_connection(int connection) {
  std::ifstream in(std::string(PARLEY_GOLDEN_DIR) + "/ag2-wire-trace.jsonl");
  REQUIRE(in.good());
  std::vector<TraceFrame> frames;
  for (std::string line; std::getline(in, line);) {
    const ordered_json entry = ordered_json::parse(line);
    if (entry["conn"] != connection) continue;
    frames.push_back({entry["dir"] == "c->h", entry["frame"]});
  }
  return frames;
}

// What AG2's hub sent in answer to one request: the response, then the
// notifies up to its next response.
struct Answer {
  ordered_json response;
  std::vector<ordered_json> notifies;
};

// Each op's answers in recorded order. Notifies before the first response
// follow nothing and are not expected (the trace has none).
std::map<std::string, std::deque<Answer>> answers_of(
    const std::vector<TraceFrame>& frames) {
  std::map<std::string, std::string> op_of_request;
  std::map<std::string, std::deque<Answer>> answers;
  Answer* last = nullptr;
  for (const TraceFrame& recorded : frames) {
    const ordered_json& frame = recorded.frame;
    if (recorded.from_client) {
      if (frame["kind"] == "request") {
        op_of_request[frame["request_id"]] = frame["op"];
      }
      continue;
    }
    if (frame["kind"] == "response") {
      auto& queue = answers[op_of_request.at(frame["request_id"])];
      queue.push_back({frame, {}});
      last = &queue.back();
    } else if (frame["kind"] == "notify") {
      REQUIRE(last != nullptr);
      last->notifies.push_back(frame);
    }
  }
  return answers;
}

// AG2's hub, replayed for one connection (see the top of the file). Every
// frame the client sends is kept, in order.
class RecordedHub {
 public:
  explicit RecordedHub(std::map<std::string, std::deque<Answer>> answers)
      : answers_(std::move(answers)) {
    acceptor_.open(tcp::v4());
    acceptor_.bind({net::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    thread_ = std::thread([this] { serve(); });
  }
  ~RecordedHub() {
    // Wakes a blocked accept or read, then waits for the thread.
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    {
      std::lock_guard lock(mutex_);
      if (socket_fd_ >= 0) ::shutdown(socket_fd_, SHUT_RDWR);
    }
    thread_.join();
  }

  std::string url() const {
    return "ws://127.0.0.1:" +
           std::to_string(acceptor_.local_endpoint().port());
  }
  std::vector<ordered_json> received() const {
    std::lock_guard lock(mutex_);
    return received_;
  }
  std::vector<std::string> unanswered_ops() const {
    std::lock_guard lock(mutex_);
    return unanswered_;
  }

 private:
  void serve() {
    beast::error_code ec;
    tcp::socket socket(io_);
    acceptor_.accept(socket, ec);
    if (ec) return;
    {
      std::lock_guard lock(mutex_);
      socket_fd_ = socket.native_handle();
    }
    beast::websocket::stream<tcp::socket> ws(std::move(socket));
    ws.accept(ec);
    if (ec) return;
    ws.text(true);
    for (;;) {
      beast::flat_buffer buffer;
      ws.read(buffer, ec);
      if (ec) return;
      ordered_json frame = ordered_json::parse(
          beast::buffers_to_string(buffer.data()), nullptr, false);
      std::vector<ordered_json> replies;
      {
        std::lock_guard lock(mutex_);
        received_.push_back(frame);
        if (!frame.is_object() || frame["kind"] != "request") continue;
        auto& queue = answers_[frame.value("op", "")];
        if (queue.empty()) {
          unanswered_.push_back(frame.value("op", ""));
          continue;
        }
        Answer answer = std::move(queue.front());
        queue.pop_front();
        answer.response["request_id"] = frame["request_id"];
        replies.push_back(std::move(answer.response));
        for (auto& notify : answer.notifies) replies.push_back(notify);
      }
      for (const ordered_json& reply : replies) {
        ws.write(net::buffer(reply.dump()), ec);
        if (ec) return;
      }
    }
  }

  net::io_context io_;
  tcp::acceptor acceptor_{io_};
  std::thread thread_;
  mutable std::mutex mutex_;
  std::map<std::string, std::deque<Answer>> answers_;
  std::vector<ordered_json> received_;
  std::vector<std::string> unanswered_;
  int socket_fd_ = -1;
};

// Whether the client's `sent` params are AG2's `recorded` ones: the same
// values, where a key left out was recorded as null or at its default.
void check_params(const std::string& op, const ordered_json& recorded,
                  const ordered_json& sent) {
  static const std::map<std::string, json> kDefaults = {{"since", 0}};
  // (Named copies: clang 14 lets no lambda, INFO's included, capture a
  // structured binding.)
  for (const auto& item : sent.items()) {
    const std::string key = item.key();
    INFO(op, " param ", key);
    REQUIRE(recorded.contains(key));
    CHECK(json(item.value()) == json(recorded[key]));
  }
  for (const auto& item : recorded.items()) {
    const std::string key = item.key();
    if (sent.contains(key)) continue;
    const json value = item.value();
    INFO(op, " left out ", key, " = ", value.dump());
    const auto fallback = kDefaults.find(key);
    CHECK((value.is_null() ||
           (fallback != kDefaults.end() && value == fallback->second)));
  }
}

// The value of a client's or the engine's result.
template <typename T, typename E>
T expect(std::expected<T, E> result) {
  REQUIRE_MESSAGE(result.has_value(), result.error().message);
  return std::move(*result);
}

std::optional<std::string> optional_text(const ordered_json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<std::string>();
}

// The recorded create_channel params as the client's request.
client::CreateChannelRequest channel_request(const ordered_json& params) {
  client::CreateChannelRequest request{
      .creator_id = params["creator_id"],
      .manifest_type = params["manifest_type"],
      .manifest_version = params["manifest_version"],
      .participants = params["participants"]};
  if (!params["required_acks"].is_null()) {
    request.required_acks = params["required_acks"].get<std::int64_t>();
  }
  if (params["ttl"].is_number_integer()) {
    request.ttl = params["ttl"].get<std::int64_t>();
  } else if (params["ttl"].is_string()) {
    request.ttl = params["ttl"].get<std::string>();
  }
  if (!params["knobs"].is_null()) request.knobs = params["knobs"].dump();
  request.intent = optional_text(params["intent"]);
  if (!params["labels"].is_null()) request.labels = params["labels"].dump();
  return request;
}

}  // namespace
}  // namespace parley::testing

using namespace parley::testing;
namespace client = parley::client;
namespace engine = parley::engine;

TEST_SUITE("client") {
  TEST_CASE("the client speaks AG2's recorded hub frame for frame") {
    const auto frames = recorded_connection(kConnection);
    RecordedHub hub(answers_of(frames));

    struct Delivered {
      std::mutex mutex;
      std::vector<client::Envelope> envelopes;
    };
    auto delivered = std::make_shared<Delivered>();
    client::IoThread io;
    auto connection =
        expect(wait<std::shared_ptr<client::HubClient>>([&](auto done) {
          client::HubClient::connect(io.executor(), hub.url(), {}, done);
        }));

    // Each recorded request's result, by request id.
    std::map<std::string, json> results;
    for (const TraceFrame& recorded : frames) {
      if (!recorded.from_client && recorded.frame["kind"] == "response") {
        results[recorded.frame["request_id"]] = json(recorded.frame["result"]);
      }
    }
    std::size_t requests = 0;
    std::vector<ordered_json> recorded_receipts;
    std::vector<ordered_json> recorded_notifies;
    for (const TraceFrame& recorded : frames) {
      const ordered_json& frame = recorded.frame;
      if (!recorded.from_client) {
        if (frame["kind"] == "notify") recorded_notifies.push_back(frame);
        continue;
      }
      if (frame["kind"] == "receipt") {
        recorded_receipts.push_back(frame);
        continue;
      }
      REQUIRE(frame["kind"] == "request");
      const std::string op = frame["op"];
      const ordered_json& params = frame["params"];
      CAPTURE(op);
      // The recorded answer, to compare what the client read of it with.
      const json answered = results.at(frame["request_id"]);
      if (op == "register") {
        client::Registration registration{
            .passport = expect(engine::passport_from_json(params["passport"])),
            .resume = expect(engine::resume_from_json(params["resume"])),
            .skill_md = optional_text(params["skill_md"]),
            .rule = expect(engine::rule_from_json(params["rule"]))};
        const auto passport = expect(wait<client::Passport>([&](auto done) {
          connection->register_human(
              registration,
              [delivered](const client::Envelope& envelope,
                          client::Finished finished) {
                {
                  std::lock_guard lock(delivered->mutex);
                  delivered->envelopes.push_back(envelope);
                }
                finished(true, "");
              },
              done);
        }));
        CHECK(engine::to_json(passport) == answered);
      } else if (op == "get_agent") {
        const auto passport = expect(wait<client::Passport>([&](auto done) {
          connection->get_agent(params["name_or_id"], done);
        }));
        CHECK(engine::to_json(passport) == answered);
      } else if (op == "create_channel") {
        const auto metadata =
            expect(wait<client::ChannelMetadata>([&](auto done) {
              connection->create_channel(channel_request(params), done);
            }));
        CHECK(engine::to_json(metadata) == answered);
      } else if (op == "get_channel") {
        const auto metadata =
            expect(wait<client::ChannelMetadata>([&](auto done) {
              connection->get_channel(params["channel_id"], done);
            }));
        CHECK(engine::to_json(metadata) == answered);
      } else if (op == "post_envelope") {
        auto envelope = expect(engine::envelope_from_json(params["envelope"]));
        const auto id = expect(wait<std::string>([&](auto done) {
          connection->post_envelope(std::move(envelope), done);
        }));
        CHECK(json(id) == answered);
      } else if (op == "read_wal") {
        const auto wal =
            expect(wait<std::vector<client::Envelope>>([&](auto done) {
              connection->read_wal(
                  params["channel_id"], done,
                  params["since"].get<std::int64_t>(),
                  params["until"].is_null()
                      ? std::nullopt
                      : std::optional(params["until"].get<std::int64_t>()));
            }));
        json read = json::array();
        for (const auto& envelope : wal)
          read.push_back(engine::to_json(envelope));
        CHECK(read == answered);
      } else {
        FAIL("the trace holds an op this test does not drive: " << op);
      }
      // The request as it went out: AG2's frame keys in AG2's order, and
      // AG2's params.
      ++requests;
      std::vector<ordered_json> sent_requests;
      for (const auto& sent : hub.received()) {
        if (sent["kind"] == "request") sent_requests.push_back(sent);
      }
      REQUIRE(sent_requests.size() == requests);
      const ordered_json& sent = sent_requests.back();
      std::vector<std::string> keys, recorded_keys;
      for (const auto& [key, value] : sent.items()) keys.push_back(key);
      for (const auto& [key, value] : frame.items())
        recorded_keys.push_back(key);
      CHECK(keys == recorded_keys);
      CHECK(sent["op"] == op);
      check_params(op, params, sent["params"]);
    }
    CHECK(hub.unanswered_ops().empty());

    // Every notify reached the handler as AG2's hub sent it, and each was
    // answered with AG2's client's receipt.
    REQUIRE(eventually([&] {
      std::size_t receipts = 0;
      for (const auto& sent : hub.received())
        receipts += sent["kind"] == "receipt";
      return receipts == recorded_receipts.size();
    }));
    {
      std::lock_guard lock(delivered->mutex);
      REQUIRE(delivered->envelopes.size() == recorded_notifies.size());
      for (std::size_t i = 0; i < recorded_notifies.size(); ++i) {
        CHECK(engine::to_json(delivered->envelopes[i]) ==
              json(recorded_notifies[i]["envelope"]));
      }
    }
    std::vector<ordered_json> receipts;
    for (const auto& sent : hub.received()) {
      if (sent["kind"] == "receipt") receipts.push_back(sent);
    }
    CHECK(receipts == recorded_receipts);
    client::close_and_wait(*connection);
  }
}
