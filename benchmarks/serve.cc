// parley-bench-serve: load on `parley serve` over loopback WebSockets, as
// AG2's remote clients put it there (Beast clients speaking AG2's frames).
//
// By default it starts `parley serve` itself on a fresh store in a
// temporary directory (durable: every post is fsynced before its answer)
// and measures the server's CPU time from /proc; --connect HOST:PORT uses
// a server already running instead (CPU is then not reported).
//
// Scenarios:
//   serve_rtt_1x1  one connection, one request in flight: alice posts
//                  ag2.msg.text to bob (on a second connection, which
//                  receives each notify and sends its receipt); round trip
//                  p50/p99 of post_envelope.
//   serve_32x8     32 connections, one agent each, 8 posts in flight per
//                  connection; agent i posts on its channel with agent
//                  i+1, whose connection receives every notify and answers
//                  each with a receipt (a durable cursor write too).
//                  Throughput counts posts answered ok; afterwards every
//                  notify must have arrived.
//
// Set-up (untimed): agents registered with inbox.max_pending 0 (no inbox
// cap), conversation channels opened with the invitee acking as AG2's
// HumanClient does. Output: db_bench-style lines and a JSON summary.

#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <charconv>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "benchmarks/bench_support.h"
#include "engine/transport/ws_frames.h"

namespace parley::bench {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;

constexpr std::size_t kTextBytes = 300;

// CPU time of this process so far (every thread), in seconds.
double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// JSON string contents for `text` (quotes, backslashes, control bytes).
std::string json_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04x", c);
      out += code;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The string value after the first (with `last`, the last) occurrence of
// `member`, a member's opening such as `"key": "` (the hub writes Python's
// separators), in `frame`; empty when absent.
std::string_view string_member(std::string_view frame, std::string_view member,
                               bool last = false) {
  std::size_t at = std::string_view::npos;
  if (!last) {
    at = frame.find(member);
  } else {
    // Back from the end quote by quote (string_view::rfind compares at
    // every position), looking further only where the byte after the
    // quote matches: most quotes close a string.
    for (std::size_t quote = frame.size(); quote > 0;) {
      quote = frame.rfind('"', quote - 1);
      if (quote == std::string_view::npos) break;
      if (quote + 1 < frame.size() && member.size() > 1 &&
          frame[quote + 1] != member[1]) {
        continue;
      }
      if (frame.substr(quote).starts_with(member)) {
        at = quote;
        break;
      }
    }
  }
  if (at == std::string_view::npos) return {};
  const std::size_t begin = at + member.size();
  const std::size_t end = frame.find('"', begin);
  if (end == std::string_view::npos) return {};
  return frame.substr(begin, end - begin);
}

// One client connection: requests with callbacks, notifies answered with
// receipts (and invites with acks). Runs on its own strand.
//
// The timed path stays off any JSON library, as redis-benchmark does with
// its commands: a post's frame is written by concatenation, and the hub's
// frames (AG2's key order, Python's separators) are read by locating the
// few members the client needs. A notify's channel_id and event_type come
// before its event_data and are found from the front; its envelope_id and
// recipient_id come after and are found from the back, so no text can be
// mistaken for them.
//
// Beast performs the opening handshake; after it the client frames the
// messages itself (RFC 6455 §5.2) on the same socket, so that it pipelines
// as redis-benchmark does: one read takes every frame that has arrived,
// and every frame queued meanwhile (receipts, the next posts) leaves in one
// write. Its frames are masked, as a client's must be, with a fresh key
// each.
class Client : public std::enable_shared_from_this<Client> {
 public:
  // The whole response frame, and whether it says ok.
  using Callback = std::function<void(std::string_view response, bool ok)>;

  Client(net::io_context& io)
      : strand_(net::make_strand(io)), socket_(strand_) {}

  // Blocking. The hub sends nothing before the client's first request, so
  // no byte after the handshake's response is left in Beast's buffer.
  void connect(const std::string& host, std::uint16_t port) {
    websocket::stream<beast::tcp_stream> ws(strand_);
    tcp::resolver resolver(strand_);
    beast::get_lowest_layer(ws).connect(
        resolver.resolve(host, std::to_string(port)));
    beast::get_lowest_layer(ws).socket().set_option(tcp::no_delay(true));
    ws.handshake(host + ":" + std::to_string(port), "/");
    socket_ = beast::get_lowest_layer(ws).release_socket();
  }

  void start() {
    net::post(strand_, [self = shared_from_this()] { self->read(); });
  }

  // Any thread. `frame_for(request_id)` writes the request frame.
  template <class FrameFor>
  void request(FrameFor frame_for, Callback done) {
    auto issue = [self = shared_from_this(), frame_for = std::move(frame_for),
                  done = std::move(done)]() mutable {
      const std::uint64_t id = self->next_id_++;
      self->pending_.emplace(id, std::move(done));
      self->send(frame_for(std::to_string(id)));
    };
    if (strand_.running_in_this_thread()) {
      issue();  // leaves with the read handler's flush
    } else {
      net::post(strand_, [self = shared_from_this(),
                          issue = std::move(issue)]() mutable {
        issue();
        self->flush();
      });
    }
  }

  void request(const std::string& op, json params, Callback done) {
    request(
        [op, params = std::move(params)](const std::string& id) {
          return json{{"request_id", id},
                      {"op", op},
                      {"params", params},
                      {"kind", "request"}}
              .dump();
        },
        std::move(done));
  }

  // Blocking, for the set-up.
  json call(const std::string& op, json params) {
    std::promise<json> answer;
    request(op, std::move(params), [&](std::string_view response, bool) {
      answer.set_value(json::parse(response));
    });
    json response = answer.get_future().get();
    if (response["ok"] != true) {
      throw BenchmarkError(op + " failed: " + response.dump());
    }
    return response["result"];
  }

  std::string agent_id;
  std::atomic<std::uint64_t> notifies = 0;

  void close() {
    net::post(strand_, [self = shared_from_this()] {
      beast::error_code ignored;
      self->socket_.close(ignored);
    });
  }

 private:
  using Opcode = transport::ws::Opcode;

  void read() {
    if (in_.size() - in_used_ < 4096) in_.resize(in_.size() * 2);
    socket_.async_read_some(
        net::buffer(in_.data() + in_used_, in_.size() - in_used_),
        [self = shared_from_this()](beast::error_code ec, std::size_t n) {
          if (ec) return;
          self->in_used_ += n;
          if (!self->read_frames()) return;
          self->flush();
          self->read();
        });
  }

  // Handles every whole frame in `in_` and keeps the partial one; false
  // once the hub has closed.
  bool read_frames() {
    std::size_t at = 0;
    bool open = true;
    while (open && in_used_ - at >= 2) {
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(in_.data());
      const std::uint8_t first = bytes[at];
      std::uint64_t length = bytes[at + 1] & 0x7f;
      if (bytes[at + 1] & 0x80) {
        throw BenchmarkError("the hub sent a masked frame");
      }
      std::size_t header = 2;
      if (length >= 126) {
        const std::size_t digits = length == 126 ? 2 : 8;
        if (in_used_ - at < 2 + digits) break;
        length = 0;
        for (std::size_t k = 0; k < digits; ++k)
          length = length << 8 | bytes[at + 2 + k];
        header += digits;
      }
      if (in_used_ - at - header < length) break;
      const std::string_view payload(in_.data() + at + header,
                                     static_cast<std::size_t>(length));
      at += header + static_cast<std::size_t>(length);
      const bool fin = first & 0x80;
      switch (static_cast<Opcode>(first & 0x0f)) {
        case Opcode::kText:
          if (fin) {
            on_frame(payload);
          } else {
            message_.assign(payload);
          }
          break;
        case Opcode::kContinuation:
          message_.append(payload);
          if (fin) on_frame(message_);
          break;
        case Opcode::kPing:
          queue_frame(Opcode::kPong, payload);
          break;
        case Opcode::kClose:
          open = false;
          break;
        default:  // pongs, and binary messages the hub never sends
          break;
      }
    }
    std::memmove(in_.data(), in_.data() + at, in_used_ - at);
    in_used_ -= at;
    return open;
  }

  void on_frame(std::string_view frame) {
    if (frame.ends_with("\"kind\": \"response\"}")) {
      const std::string_view id = string_member(frame, R"("request_id": ")");
      std::uint64_t key = 0;
      std::from_chars(id.data(), id.data() + id.size(), key);
      auto it = pending_.find(key);
      if (it == pending_.end()) return;
      Callback done = std::move(it->second);
      pending_.erase(it);
      done(frame, frame.find("\"ok\": true,") != std::string_view::npos);
    } else if (frame.ends_with("\"kind\": \"notify\"}")) {
      const std::string_view channel =
          string_member(frame, R"("channel_id": ")");
      const std::string_view type = string_member(frame, R"("event_type": ")");
      const std::string_view envelope_id =
          string_member(frame, R"("envelope_id": ")", /*last=*/true);
      const std::string_view recipient =
          string_member(frame, R"("recipient_id": ")", /*last=*/true);
      if (type == "ag2.channel.invite") {
        request("post_envelope",
                {{"envelope",
                  {{"channel_id", channel},
                   {"sender_id", recipient},
                   {"audience", nullptr},
                   {"event_type", "ag2.channel.invite.ack"},
                   {"event_data", {{"channel_id", channel}}},
                   {"causation_id", envelope_id}}}},
                [](std::string_view, bool) {});
      } else if (type == "ag2.msg.text") {
        notifies.fetch_add(1, std::memory_order_relaxed);
      }
      receipt_.clear();
      for (const std::string_view part :
           {std::string_view("{\"envelope_id\": \""), envelope_id,
            std::string_view("\", \"status\": \"ack\", \"recipient_id\": \""),
            recipient, std::string_view("\", \"channel_id\": \""), channel,
            std::string_view("\", \"reason\": \"\", \"kind\": \"receipt\"}")}) {
        receipt_.append(part);
      }
      send(receipt_);
    }
  }

  void send(std::string_view text) { queue_frame(Opcode::kText, text); }

  // Appends a whole (FIN) frame, masked, to what the next write carries.
  void queue_frame(Opcode opcode, std::string_view payload) {
    const std::size_t length = payload.size();
    out_.push_back(static_cast<char>(0x80 | static_cast<std::uint8_t>(opcode)));
    if (length < 126) {
      out_.push_back(static_cast<char>(0x80 | length));
    } else if (length <= 0xffff) {
      out_.push_back(static_cast<char>(0x80 | 126));
      for (int shift = 8; shift >= 0; shift -= 8)
        out_.push_back(static_cast<char>(length >> shift));
    } else {
      out_.push_back(static_cast<char>(0x80 | 127));
      for (int shift = 56; shift >= 0; shift -= 8)
        out_.push_back(static_cast<char>(length >> shift));
    }
    // xorshift64: a fresh masking key per frame.
    mask_state_ ^= mask_state_ << 13;
    mask_state_ ^= mask_state_ >> 7;
    mask_state_ ^= mask_state_ << 17;
    const auto key = static_cast<std::uint32_t>(mask_state_);
    char key_bytes[4];
    std::memcpy(key_bytes, &key, 4);
    out_.append(key_bytes, 4);
    const std::size_t begin = out_.size();
    out_.append(payload);
    transport::ws::apply_mask({out_.data() + begin, length}, key_bytes);
  }

  // Writes what is queued unless a write is in flight (its completion
  // writes what was queued meanwhile).
  void flush() {
    if (writing_ || out_.empty()) return;
    writing_ = true;
    std::swap(out_, wire_);
    net::async_write(
        socket_, net::buffer(wire_),
        [self = shared_from_this()](beast::error_code ec, std::size_t) {
          if (ec) return;
          self->wire_.clear();
          self->writing_ = false;
          self->flush();
        });
  }

  net::strand<net::io_context::executor_type> strand_;
  tcp::socket socket_;
  std::vector<char> in_ = std::vector<char>(64 * 1024);
  std::size_t in_used_ = 0;
  std::string message_;  // a fragmented message so far
  std::string out_;      // frames for the next write
  std::string wire_;     // frames of the write in flight
  std::string receipt_;
  bool writing_ = false;
  std::uint64_t mask_state_ = 0x9e3779b97f4a7c15;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, Callback> pending_;
};

// `parley serve` started by the benchmark.
class ServerProcess {
 public:
  ServerProcess(const std::string& parley, const std::filesystem::path& data,
                std::vector<std::string> extra) {
    int out[2];
    if (pipe(out) != 0) throw BenchmarkError("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<std::string> args = {
        parley,     "serve",       "--data",          data.string(),
        "--listen", "127.0.0.1:0", "--ping-interval", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, parley.c_str(), &actions, nullptr, argv.data(),
                    environ) != 0) {
      throw BenchmarkError("cannot start " + parley);
    }
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    std::string output;
    const std::regex listening(R"(listening on ws://127\.0\.0\.1:(\d+))");
    std::smatch match;
    char buffer[1024];
    while (!std::regex_search(output, match, listening)) {
      const ssize_t n = read(out[0], buffer, sizeof buffer);
      if (n <= 0) throw BenchmarkError("parley serve failed: " + output);
      output.append(buffer, static_cast<std::size_t>(n));
    }
    close(out[0]);
    port_ = static_cast<std::uint16_t>(std::stoi(match[1]));
  }
  ~ServerProcess() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  std::uint16_t port() const { return port_; }
  // utime + stime of the server so far, in seconds.
  double cpu_seconds() const {
    std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    unsigned long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14) utime = std::stoul(field);
      if (i == 15) stime = std::stoul(field);
    }
    return static_cast<double>(utime + stime) /
           static_cast<double>(sysconf(_SC_CLK_TCK));
  }

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

// post_envelope request frames of ag2.msg.text, as AG2's client writes
// them, from parts made before the timed run: one agent's channel and
// sender, and texts taken in turn.
class TextPosts {
 public:
  TextPosts(const std::string& channel, const std::string& sender,
            const std::vector<std::string>& escaped_texts)
      : head_(
            "\", \"op\": \"post_envelope\", \"params\": "
            "{\"envelope\": {\"channel_id\": \"" +
            channel + "\", \"sender_id\": \"" + sender +
            "\", \"audience\": null, \"event_type\": \"ag2.msg.text\", "
            "\"event_data\": {\"text\": \""),
        texts_(escaped_texts) {}

  // The frame of post `i`.
  std::string frame(std::string_view request_id, std::uint64_t i) const {
    constexpr std::string_view kOpen = "{\"request_id\": \"";
    constexpr std::string_view kClose = "\"}}}, \"kind\": \"request\"}";
    const std::string& text = texts_[i % texts_.size()];
    std::string out;
    out.reserve(kOpen.size() + request_id.size() + head_.size() + text.size() +
                kClose.size());
    out.append(kOpen)
        .append(request_id)
        .append(head_)
        .append(text)
        .append(kClose);
    return out;
  }

 private:
  std::string head_;
  const std::vector<std::string>& texts_;
};

struct Setup {
  net::io_context io;
  std::vector<std::shared_ptr<Client>> clients;
  std::vector<std::string> channels;  // channels[i]: agent i -> agent i+1
  std::vector<std::thread> threads;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;

  // `n` connections, agent i on connection i; channel i from agent i to
  // agent (i + 1) % n.
  Setup(const std::string& host, std::uint16_t port, std::size_t n,
        const std::string& tag) {
    work.emplace(net::make_work_guard(io));
    for (int t = 0; t < 2; ++t) threads.emplace_back([this] { io.run(); });
    for (std::size_t i = 0; i < n; ++i) {
      auto client = std::make_shared<Client>(io);
      client->connect(host, port);
      client->start();
      client->agent_id = client->call(
          "register",
          {{"passport", {{"name", tag + "-" + std::to_string(i)}}},
           {"resume", json::object()},
           {"rule",
            {{"limits", {{"inbox", {{"max_pending", 0}}}}}}}})["agent_id"];
      clients.push_back(std::move(client));
    }
    for (std::size_t i = 0; i < n; ++i) {
      channels.push_back(clients[i]->call(
          "create_channel",
          {{"creator_id", clients[i]->agent_id},
           {"manifest_type", "conversation"},
           {"participants", {clients[(i + 1) % n]->agent_id}}})["channel_id"]);
    }
  }
  ~Setup() {
    for (auto& client : clients) client->close();
    work.reset();
    io.stop();
    for (auto& thread : threads) thread.join();
  }
};

// Posts `ops` envelopes in all, `in_flight` at a time per connection.
// Connections 0 .. posters-1 post.
Measurement run_load(const std::string& name, Setup& setup, std::uint64_t ops,
                     std::size_t posters, std::size_t in_flight,
                     const ServerProcess* server) {
  const std::size_t n = posters;
  std::mutex mutex;
  std::condition_variable finished;
  // latencies[i]: connection i's, written on its strand only.
  std::vector<std::vector<Clock::duration>> latencies(n);
  for (auto& each : latencies) each.reserve(ops / n + in_flight);
  std::uint64_t answered = 0;  // guarded by `mutex`
  std::uint64_t failed = 0;    // guarded by `mutex`
  std::string first_failure;
  std::atomic<std::uint64_t> issued = 0;
  std::uint64_t notifies_before = 0;
  for (auto& client : setup.clients) notifies_before += client->notifies;
  std::vector<std::string> texts;
  for (std::size_t v = 0; v < 64; ++v) {
    texts.push_back(json_escaped(chat_text(kTextBytes, v)));
  }
  std::vector<TextPosts> posts;
  for (std::size_t i = 0; i < n; ++i) {
    posts.emplace_back(setup.channels[i], setup.clients[i]->agent_id, texts);
  }

  std::function<void(std::size_t)> post_next = [&](std::size_t i) {
    const std::uint64_t k = issued.fetch_add(1);
    if (k >= ops) return;
    const auto sent = Clock::now();
    setup.clients[i]->request(
        [&posts, i, k](const std::string& id) { return posts[i].frame(id, k); },
        [&, i, sent](std::string_view response, bool ok) {
          latencies[i].push_back(Clock::now() - sent);
          if (!ok) {
            std::lock_guard lock(mutex);
            if (failed++ == 0) first_failure = response;
          }
          // The next post first: once the last answer is counted,
          // run_load may return, and with it post_next.
          post_next(i);
          std::lock_guard lock(mutex);
          if (++answered == ops) finished.notify_all();
        });
  };
  const double cpu_before = server ? server->cpu_seconds() : 0;
  const double client_cpu_before = process_cpu_seconds();
  const auto start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < in_flight; ++j) post_next(i);
  }
  {
    std::unique_lock lock(mutex);
    finished.wait(lock, [&] { return answered == ops; });
  }
  const double seconds = seconds_since(start);
  const double cpu = server ? server->cpu_seconds() - cpu_before : 0;
  const double client_cpu_after = process_cpu_seconds();
  if (failed > 0) {
    throw BenchmarkError(name + ": " + std::to_string(failed) +
                         " posts failed, first: " + first_failure);
  }
  // Every notify arrives (each post has one recipient).
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  std::uint64_t notifies = 0;
  while (Clock::now() < deadline) {
    notifies = 0;
    for (auto& client : setup.clients) notifies += client->notifies;
    if (notifies - notifies_before >= ops) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (notifies - notifies_before != ops) {
    throw BenchmarkError(name + ": " +
                         std::to_string(notifies - notifies_before) +
                         " notifies for " + std::to_string(ops) + " posts");
  }
  std::vector<Clock::duration> all;
  all.reserve(ops);
  for (const auto& each : latencies)
    all.insert(all.end(), each.begin(), each.end());
  std::ranges::sort(all);
  Measurement m{.name = name,
                .ops = ops,
                .seconds = seconds,
                .bytes_per_op = kTextBytes,
                .p50_us = percentile_us(all, 0.5),
                .p99_us = percentile_us(all, 0.99)};
  const double client_us =
      (client_cpu_after - client_cpu_before) * 1e6 / static_cast<double>(ops);
  m.extra.emplace_back("client_cpu_us_per_post",
                       json_number(client_us, "%.1f"));
  if (server) {
    m.cpu_seconds = cpu;
    m.note = "server cpu " +
             json_number(cpu * 1e6 / static_cast<double>(ops), "%.1f") +
             " us/post, load generator cpu " + json_number(client_us, "%.1f") +
             " us/post";
    m.extra.emplace_back(
        "server_cpu_us_per_post",
        json_number(cpu * 1e6 / static_cast<double>(ops), "%.1f"));
  }
  m.extra.emplace_back("connections", std::to_string(n));
  m.extra.emplace_back("in_flight_per_connection", std::to_string(in_flight));
  return m;
}

struct Options {
  std::vector<std::string> scenarios = {"serve_rtt_1x1", "serve_32x8"};
  std::uint64_t rtt_ops = 5000;
  std::uint64_t load_ops = 100000;
  std::string connect;  // HOST:PORT of a running server
  std::string parley = PARLEY_BINARY;
  std::string json_path;
  std::filesystem::path dir = std::filesystem::temp_directory_path();
};

void run(const Options& options) {
  std::optional<ScratchDir> scratch;
  std::optional<ServerProcess> server;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  if (options.connect.empty()) {
    scratch.emplace(options.dir);
    server.emplace(options.parley, scratch->path() / "data",
                   std::vector<std::string>{});
    port = server->port();
  } else {
    const auto colon = options.connect.rfind(':');
    host = options.connect.substr(0, colon);
    port = static_cast<std::uint16_t>(
        std::stoi(options.connect.substr(colon + 1)));
  }
  std::printf("Server:     ws://%s:%u (%s)\n", host.c_str(), port,
              server ? "started by the benchmark, durable" : "running");
  std::printf("Envelope:   ag2.msg.text, %zu-byte texts\n", kTextBytes);
  std::printf("CPU:        the server's CPU time over wall time\n");
  std::printf("------------------------------------------------\n");
  std::fflush(stdout);
  const ServerProcess* measured = server ? &*server : nullptr;
  std::vector<Measurement> measurements;
  const std::string tag = std::to_string(getpid());
  for (const std::string& name : options.scenarios) {
    if (name == "serve_rtt_1x1") {
      Setup setup(host, port, 2, tag + "-rtt");
      measurements.push_back(
          run_load(name, setup, options.rtt_ops, 1, 1, measured));
    } else {
      Setup setup(host, port, 32, tag + "-load");
      measurements.push_back(
          run_load(name, setup, options.load_ops, 32, 8, measured));
    }
    print_line(measurements.back());
  }
  emit_summary(measurements, options.json_path);
}

}  // namespace
}  // namespace parley::bench

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  parley::bench::Options options;
  CLI::App app{"Load on parley serve over loopback WebSockets"};
  app.add_option("--scenarios", options.scenarios,
                 "Comma-separated: serve_rtt_1x1, serve_32x8")
      ->delimiter(',')
      ->check(CLI::IsMember({"serve_rtt_1x1", "serve_32x8"}));
  app.add_option("--rtt-ops", options.rtt_ops,
                 "Posts in serve_rtt_1x1 (default 5000)");
  app.add_option("--load-ops", options.load_ops,
                 "Posts in serve_32x8 (default 100000)");
  app.add_option("--connect", options.connect,
                 "HOST:PORT of a running parley serve (default: start one)");
  app.add_option("--parley", options.parley, "The parley binary to start");
  app.add_option("--json", options.json_path,
                 "Also write the JSON summary to this file");
  app.add_option("--dir", options.dir,
                 "Where to create the started server's temporary store")
      ->check(CLI::ExistingDirectory);
  CLI11_PARSE(app, argc, argv);
  return parley::bench::run_reporting("parley-bench-serve",
                                      [&] { parley::bench::run(options); });
}
