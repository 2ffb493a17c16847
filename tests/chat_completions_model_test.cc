// ChatCompletionsModel against a local server speaking the OpenAI-compatible
// chat-completions API (as vLLM and llama.cpp's server do): the request's
// mapping, the reply's, HTTP errors and timeouts, and an AgentClient whose
// turns it runs, tool calls included.
#include "engine/client/chat_completions_model.h"

#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <functional>
#include <list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "engine/client/agent_client.h"
#include "engine/client/envelopes.h"
#include "tests/client_networks.h"

namespace parley::testing {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using client::ChatCompletionsModel;
using client::ChatCompletionsOptions;
using client::ModelMessage;
using client::ModelReply;
using client::ModelRequest;
using client::Result;
using client::wait;
using nlohmann::json;
using Role = ModelMessage::Role;

// What the server was sent.
struct Received {
  std::string target;
  std::string authorization;
  json body;
};

// An HTTP server on 127.0.0.1 answering each POST with `respond(body)`:
// (status, body), or no answer at all when the status is 0. Runs on its
// own thread until destroyed.
class ChatServer {
 public:
  using Respond = std::function<std::pair<unsigned, std::string>(const json&)>;

  explicit ChatServer(Respond respond)
      : respond_(std::move(respond)),
        acceptor_(io_, {net::ip::make_address("127.0.0.1"), 0}) {
    accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~ChatServer() {
    io_.stop();
    thread_.join();
  }

  std::string base_url() const {
    return "http://127.0.0.1:" +
           std::to_string(acceptor_.local_endpoint().port()) + "/v1";
  }
  std::vector<Received> received() const {
    std::lock_guard lock(mutex_);
    return received_;
  }

 private:
  struct Connection {
    explicit Connection(tcp::socket s) : socket(std::move(s)) {}
    tcp::socket socket;
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    http::response<http::string_body> response;
  };

  void accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec) return;
      auto& connection = connections_.emplace_back(std::move(socket));
      http::async_read(connection.socket, connection.buffer, connection.request,
                       [this, &connection](beast::error_code ec, std::size_t) {
                         if (!ec) answer(connection);
                       });
      accept();
    });
  }

  void answer(Connection& connection) {
    const json body = json::parse(connection.request.body(), nullptr, false);
    {
      std::lock_guard lock(mutex_);
      received_.push_back(
          {std::string(connection.request.target()),
           std::string(connection.request[http::field::authorization]), body});
    }
    auto [status, text] = respond_(body);
    if (status == 0) return;  // silent: the client's deadline passes
    connection.response.result(status);
    connection.response.version(11);
    connection.response.set(http::field::content_type, "application/json");
    connection.response.body() = std::move(text);
    connection.response.prepare_payload();
    http::async_write(connection.socket, connection.response,
                      [](beast::error_code, std::size_t) {});
  }

  Respond respond_;
  net::io_context io_;
  tcp::acceptor acceptor_;
  std::list<Connection> connections_;  // on the server's thread
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<Received> received_;  // guarded by mutex_
};

std::string completion(const json& message) {
  return json{
      {"id", "chatcmpl-1"},
      {"object", "chat.completion"},
      {"choices",
       {{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}}}
      .dump();
}

std::string text_completion(std::string_view text) {
  return completion({{"role", "assistant"}, {"content", text}});
}

std::shared_ptr<ChatCompletionsModel> model_for(
    const ChatServer& server, boost::asio::any_io_executor executor,
    std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto model = ChatCompletionsModel::create(std::move(executor),
                                            {.base_url = server.base_url(),
                                             .model = "local-model",
                                             .api_key = "sk-test",
                                             .timeout = timeout});
  REQUIRE_MESSAGE(model.has_value(), model.error().message);
  return *model;
}

Result<ModelReply> complete(client::Model& model, ModelRequest request) {
  return wait<ModelReply>(
      [&](auto done) { model.complete(std::move(request), done); });
}

}  // namespace
}  // namespace parley::testing

using namespace parley::testing;
namespace client = parley::client;
namespace engine = parley::engine;
using nlohmann::json;

TEST_SUITE("client") {
  TEST_CASE("a model request maps to a chat-completions body") {
    client::ModelRequest request;
    request.messages = {
        {.role = Role::kSystem, .text = "You are bot."},
        {.role = Role::kSummary,
         .text = "Earlier in this channel: 3 messages."},
        {.role = Role::kUser, .text = "hi"},
        {.role = Role::kAssistant,
         .tool_calls = {{.id = "c1", .name = "say", .arguments_json = "{}"}}},
        {.role = Role::kTool,
         .text = "posted e1",
         .tool_call_id = "c1",
         .tool_name = "say"},
        {.role = Role::kAssistant, .text = "done"}};
    request.tools = {{.name = "say",
                      .description = "Post a message.",
                      .parameters = R"({"type":"object"})"}};
    const json body = json::parse(client::chat_completions_body(
        request, {.model = "m", .temperature = 0.5, .max_tokens = 64}));
    CHECK(body["model"] == "m");
    CHECK(body["temperature"] == 0.5);
    CHECK(body["max_tokens"] == 64);
    CHECK(body["messages"] == json::parse(R"([
            {"role":"system","content":"You are bot."},
            {"role":"system","content":"Earlier in this channel: 3 messages."},
            {"role":"user","content":"hi"},
            {"role":"assistant","content":null,"tool_calls":[
              {"id":"c1","type":"function",
               "function":{"name":"say","arguments":"{}"}}]},
            {"role":"tool","content":"posted e1","tool_call_id":"c1"},
            {"role":"assistant","content":"done"}])"));
    CHECK(body["tools"] == json::parse(R"([{"type":"function","function":{
            "name":"say","description":"Post a message.",
            "parameters":{"type":"object"}}}])"));
    CHECK_FALSE(
        json::parse(client::chat_completions_body({}, {})).contains("tools"));
  }

  TEST_CASE("a chat completion's first choice is the model's reply") {
    auto text = client::parse_chat_completion(text_completion("42"));
    REQUIRE(text.has_value());
    CHECK(text->text == "42");
    CHECK(text->tool_calls.empty());

    auto calls = client::parse_chat_completion(completion(
        {{"role", "assistant"},
         {"content", nullptr},
         {"tool_calls",
          {{{"id", "call_9"},
            {"type", "function"},
            {"function",
             {{"name", "say"}, {"arguments", R"({"content":"hi"})"}}}}}}}));
    REQUIRE(calls.has_value());
    CHECK(calls->text.empty());
    CHECK(calls->tool_calls == std::vector<client::ToolCall>{
                                   {.id = "call_9",
                                    .name = "say",
                                    .arguments_json = R"({"content":"hi"})"}});
  }

  TEST_CASE(
      "an unreadable chat completion is an error naming what is missing") {
    const auto error = [](std::string_view body) {
      auto reply = client::parse_chat_completion(body);
      REQUIRE_FALSE(reply.has_value());
      return reply.error();
    };
    CHECK(error("not json").message ==
          "chat completion response: not a JSON object");
    CHECK(error(R"({"choices":[]})").message ==
          "chat completion response: no choices");
    CHECK(error(R"({"choices":[{"message":{"tool_calls":[{}]}}]})").message ==
          "chat completion response: a tool call has no function name");
    CHECK(error(R"({"choices":[{"message":{"content":7}}]})").code ==
          client::code::kInvalid);
    const auto refused = error(R"({"error":{"message":"quota exceeded"}})");
    CHECK(refused.code == client::code::kError);
    CHECK(refused.message == "quota exceeded");
  }

  TEST_CASE("a model URL must be http(s)://HOST[:PORT][/PATH]") {
    client::IoThread io;
    for (std::string_view url : {"ftp://x", "http://", "https://", "http://h:0",
                                 "http://h:99999/v1"}) {
      CAPTURE(url);
      auto model = ChatCompletionsModel::create(io.executor(),
                                                {.base_url = std::string(url)});
      REQUIRE_FALSE(model.has_value());
      CHECK(model.error().code == client::code::kInvalid);
    }
    auto parsed = client::parse_http_url("http://localhost/v1/");
    REQUIRE(parsed.has_value());
    CHECK(parsed->port == "80");
    CHECK(parsed->target == "/v1/");
    CHECK_FALSE(parsed->tls);
    auto secure = client::parse_http_url("https://api.example.com/v1");
    REQUIRE(secure.has_value());
    CHECK(secure->port == "443");
    CHECK(secure->tls);
  }

  TEST_CASE(
      "an https:// model is reached when a trusted CA signed its "
      "certificate for its address and refused when none did") {
    parley::testing::ScratchDir certs;
    // Not bindings: lambdas capture them, which clang 14 cannot.
    const auto certificate = self_signed_certificate(certs.path());
    const auto& cert = certificate.cert;
    const auto& key = certificate.key;
    // A TLS server for two connections, one after the other: each is
    // answered with a completion if its handshake succeeds.
    net::ssl::context tls(net::ssl::context::tls_server);
    tls.use_certificate_chain_file(cert.string());
    tls.use_private_key_file(key.string(), net::ssl::context::pem);
    net::io_context server_io;
    tcp::acceptor acceptor(server_io, {net::ip::make_address("127.0.0.1"), 0});
    std::thread server([&] {
      for (int i = 0; i < 2; ++i) {
        try {
          beast::ssl_stream<tcp::socket> stream(acceptor.accept(), tls);
          stream.handshake(net::ssl::stream_base::server);
          beast::flat_buffer buffer;
          http::request<http::string_body> request;
          http::read(stream, buffer, request);
          http::response<http::string_body> response(http::status::ok, 11);
          response.set(http::field::content_type, "application/json");
          response.body() = text_completion("over TLS");
          response.prepare_payload();
          http::write(stream, response);
        } catch (const std::exception&) {
          // The client refused the certificate.
        }
      }
    });
    const std::string base_url =
        "https://127.0.0.1:" +
        std::to_string(acceptor.local_endpoint().port()) + "/v1";
    client::IoThread io;
    auto ask = [&](std::optional<std::filesystem::path> ca) {
      auto model = ChatCompletionsModel::create(
          io.executor(), {.base_url = base_url, .tls_ca_file = ca});
      REQUIRE_MESSAGE(model.has_value(), model.error().message);
      return complete(**model, {});
    };
    auto trusted = ask(cert);
    REQUIRE_MESSAGE(trusted.has_value(), trusted.error().message);
    CHECK(trusted->text == "over TLS");
    auto untrusted = ask(std::nullopt);
    REQUIRE_FALSE(untrusted.has_value());
    CHECK(untrusted.error().code == client::code::kDisconnected);
    CHECK_MESSAGE(
        untrusted.error().message.find("TLS handshake") != std::string::npos,
        untrusted.error().message);
    server.join();
  }

  TEST_CASE(
      "the model posts to the server's /chat/completions and reads its "
      "answer") {
    ChatServer server([](const json&) {
      return std::pair{200u, text_completion("42")};
    });
    client::IoThread io;
    auto model = model_for(server, io.executor());
    client::ModelRequest request;
    request.messages = {{.role = Role::kUser, .text = "6 times 7?"}};
    auto reply = complete(*model, request);
    REQUIRE_MESSAGE(reply.has_value(), reply.error().message);
    CHECK(reply->text == "42");
    const auto received = server.received();
    REQUIRE(received.size() == 1);
    CHECK(received[0].target == "/v1/chat/completions");
    CHECK(received[0].authorization == "Bearer sk-test");
    CHECK(received[0].body["model"] == "local-model");
    CHECK(received[0].body["messages"] ==
          json::parse(R"([{"role":"user","content":"6 times 7?"}])"));
  }

  TEST_CASE("an HTTP error status fails the call with the server's message") {
    ChatServer server([](const json&) {
      return std::pair{429u,
                       std::string(R"({"error":{"message":"rate limited"}})")};
    });
    client::IoThread io;
    auto reply = complete(*model_for(server, io.executor()), {});
    REQUIRE_FALSE(reply.has_value());
    CHECK(reply.error().code == client::code::kError);
    CHECK(reply.error().message == "chat completion HTTP 429: rate limited");
  }

  TEST_CASE("a server that never answers fails the call at its deadline") {
    ChatServer server([](const json&) { return std::pair{0u, std::string()}; });
    client::IoThread io;
    auto reply = complete(
        *model_for(server, io.executor(), std::chrono::milliseconds(300)), {});
    REQUIRE_FALSE(reply.has_value());
    CHECK(reply.error().code == client::code::kTimeout);
  }

  TEST_CASE("a refused connection fails the call as disconnected") {
    std::string url;
    {
      ChatServer closed([](const json&) {
        return std::pair{0u, std::string()};
      });
      url = closed.base_url();
    }
    client::IoThread io;
    auto model = ChatCompletionsModel::create(io.executor(), {.base_url = url});
    REQUIRE(model.has_value());
    auto reply = complete(**model, {});
    REQUIRE_FALSE(reply.has_value());
    CHECK(reply.error().code == client::code::kDisconnected);
  }

  TEST_CASE("an agent answers through a chat-completions server calling say") {
    // First call: the model calls say; second: a final answer after seeing
    // the tool's result.
    ChatServer server([](const json& body) {
      if (body["messages"].back()["role"] != "tool") {
        return std::pair{
            200u, completion({{"role", "assistant"},
                              {"content", nullptr},
                              {"tool_calls",
                               {{{"id", "call_1"},
                                 {"type", "function"},
                                 {"function",
                                  {{"name", "say"},
                                   {"arguments", R"({"content":"42"})"}}}}}}})};
      }
      return std::pair{200u, text_completion("")};
    });
    InProcessNet net;
    auto model = model_for(server, net.executor());
    auto agent = wait<std::shared_ptr<client::AgentClient>>([&](auto done) {
      client::Registration registration;
      registration.passport.name = "analyst";
      client::AgentClient::register_agent(net.connect(), registration, model,
                                          {}, done);
    });
    REQUIRE_MESSAGE(agent.has_value(), agent.error().message);
    auto ada = wait<std::shared_ptr<client::HumanClient>>([&](auto done) {
      client::Registration registration;
      registration.passport.name = "ada";
      client::HumanClient::register_human(net.connect(), registration, {},
                                          done);
    });
    REQUIRE(ada.has_value());
    auto channel = wait<client::ChannelMetadata>([&](auto done) {
      (*ada)->open({.type = "consulting", .targets = {"analyst"}}, done);
    });
    REQUIRE_MESSAGE(channel.has_value(), channel.error().message);
    auto question = wait<std::string>([&](auto done) {
      (*ada)->send(channel->channel_id, "6 times 7?", done);
    });
    REQUIRE(question.has_value());

    REQUIRE(eventually([&] {
      auto state = net.hub().get_channel(channel->channel_id);
      return state && state->state == engine::ChannelState::kClosed;
    }));
    auto wal = net.hub().read_wal(channel->channel_id);
    REQUIRE(wal.has_value());
    std::vector<std::string> answers;
    for (const auto& envelope : *wal) {
      if (envelope.sender_id == (*agent)->agent_id() &&
          envelope.event_type == engine::event_type::kText) {
        answers.push_back(client::text_of(envelope));
      }
    }
    CHECK(answers == std::vector<std::string>{"42"});
    // The say closed the channel before the model's second call, which the
    // turn makes after it.
    REQUIRE(eventually([&] { return server.received().size() == 2; }));
    const auto received = server.received();
    CHECK(received[0].body["tools"][0]["function"]["name"] == "say");
    const json& second = received[1].body["messages"];
    CHECK(second[second.size() - 2]["tool_calls"][0]["id"] == "call_1");
    CHECK(second.back()["role"] == "tool");
    CHECK(second.back()["tool_call_id"] == "call_1");
    CHECK(second.back()["content"].get<std::string>().starts_with("posted "));
  }
}
