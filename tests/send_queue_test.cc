// A connection's send queue and the frames in it, without sockets.
#include "engine/transport/send_queue.h"

#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/base/flex_json.h"
#include "engine/transport/frame_codec.h"

namespace parley {
namespace {

using transport::OutgoingFrame;
using transport::SendQueue;

std::shared_ptr<const engine::Envelope> text_envelope(std::string text) {
  auto envelope = std::make_shared<engine::Envelope>();
  envelope->channel_id = "c";
  envelope->sender_id = "s";
  envelope->event_type = "ag2.msg.text";
  envelope->event_data =
      engine::to_flex(nlohmann::json{{"text", std::move(text)}}).value();
  envelope->envelope_id = "e";
  envelope->created_at = "2026-01-01T00:00:00+00:00";
  return envelope;
}

// The writer's next frame alone (a batch of one byte takes one frame), if
// the queue holds any.
std::optional<OutgoingFrame> pop_one(SendQueue& queue) {
  std::vector<OutgoingFrame> taken;
  if (queue.pop(1, taken) == 0) return std::nullopt;
  REQUIRE(taken.size() == 1);
  return std::move(taken.front());
}

// The writer's next frame, encoded.
std::string next_frame(SendQueue& queue) {
  auto next = pop_one(queue);
  REQUIRE(next);
  return std::move(*next).take();
}

TEST_CASE("a queued notify is written as encode_notify writes it") {
  const auto envelope = text_envelope("caf\xc3\xa9 \"quoted\"");
  SendQueue queue({});
  REQUIRE(queue.push(OutgoingFrame::notify(envelope, "bob")) ==
          SendQueue::Push::kStartWriter);
  CHECK(next_frame(queue) == transport::encode_notify(*envelope, "bob"));
  // The queue held the envelope itself, not a copy.
  CHECK(envelope.use_count() == 1);
}

TEST_CASE(
    "a queued post response is written as encode_string_response writes it, "
    "its charge that frame's size") {
  const std::string frame = transport::encode_string_response("7", "e-1");
  const OutgoingFrame response = OutgoingFrame::string_response("7", "e-1");
  CHECK(response.charge() == frame.size());
  SendQueue queue({});
  REQUIRE(queue.push(OutgoingFrame::string_response("7", "e-1")) ==
          SendQueue::Push::kStartWriter);
  CHECK(next_frame(queue) == frame);
  CHECK(frame ==
        R"({"request_id": "7", "ok": true, "result": "e-1", "error_code": "", )"
        R"("error_message": "", "kind": "response"})");
}

TEST_CASE("frames and notifies leave the queue in the order they came") {
  SendQueue queue({});
  const auto envelope = text_envelope("hi");
  REQUIRE(queue.push(std::string("first")) == SendQueue::Push::kStartWriter);
  REQUIRE(queue.push(OutgoingFrame::notify(envelope, "bob")) ==
          SendQueue::Push::kQueued);
  REQUIRE(queue.push(std::string("third")) == SendQueue::Push::kQueued);
  CHECK(next_frame(queue) == "first");
  CHECK(next_frame(queue) == transport::encode_notify(*envelope, "bob"));
  CHECK(next_frame(queue) == "third");
  CHECK_FALSE(pop_one(queue));
  CHECK(queue.idle());
}

TEST_CASE(
    "the writer takes the queued frames a write at a time, up to its byte "
    "budget, and stays started until a pop finds the queue empty") {
  SendQueue queue({});
  REQUIRE(queue.push(std::string(10, 'a')) == SendQueue::Push::kStartWriter);
  REQUIRE(queue.push(std::string(10, 'b')) == SendQueue::Push::kQueued);
  REQUIRE(queue.push(std::string(10, 'c')) == SendQueue::Push::kQueued);
  std::vector<OutgoingFrame> taken;
  // Charges of 10 bytes: the budget of 15 is reached with the second.
  CHECK(queue.pop(15, taken) == 2);
  CHECK(queue.frames() == 1);
  CHECK(queue.bytes() == 10);
  // Pushed while those two are written: the writer takes it next.
  CHECK(queue.push(std::string(10, 'd')) == SendQueue::Push::kQueued);
  CHECK(queue.pop(1024, taken) == 2);
  REQUIRE(taken.size() == 4);
  std::string written;
  for (OutgoingFrame& frame : taken) written += std::move(frame).take();
  CHECK(written == std::string(10, 'a') + std::string(10, 'b') +
                       std::string(10, 'c') + std::string(10, 'd'));
  CHECK_FALSE(queue.idle());
  CHECK(queue.pop(1024, taken) == 0);
  CHECK(queue.idle());
  CHECK(queue.push(std::string("e")) == SendQueue::Push::kStartWriter);
}

TEST_CASE(
    "frames pushed from several threads while the writer runs are all "
    "written, each thread's in order, with one start per idle spell") {
  // The writer runs as a connection's does: started when a push says so,
  // it takes a write's worth at a time until a pop finds the queue empty.
  constexpr int kProducers = 4;
  constexpr int kFrames = 20000;
  SendQueue queue({.max_frames = kProducers * kFrames, .max_bytes = 1 << 30});
  std::mutex start_mutex;
  std::condition_variable start_signal;
  int starts = 0;
  bool done = false;
  std::vector<std::string> written;
  std::thread writer([&] {
    int served = 0;
    std::vector<OutgoingFrame> taken;
    for (;;) {
      {
        std::unique_lock lock(start_mutex);
        start_signal.wait(lock, [&] { return starts > served || done; });
        if (starts == served) return;  // done, and nothing was started
        ++served;
      }
      while (queue.pop(64, taken) > 0) {
        for (OutgoingFrame& frame : taken) {
          written.push_back(std::move(frame).take());
        }
        taken.clear();
      }
    }
  });
  std::atomic<int> refused = 0;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kFrames; ++i) {
        const auto pushed =
            queue.push(std::to_string(p) + ":" + std::to_string(i));
        if (pushed == SendQueue::Push::kOverflow) ++refused;
        if (pushed == SendQueue::Push::kStartWriter) {
          std::lock_guard lock(start_mutex);
          ++starts;
          start_signal.notify_one();
        }
      }
    });
  }
  for (std::thread& producer : producers) producer.join();
  {
    std::lock_guard lock(start_mutex);
    done = true;
    start_signal.notify_one();
  }
  writer.join();
  CHECK(refused == 0);
  CHECK(queue.idle());
  REQUIRE(written.size() == std::size_t{kProducers} * kFrames);
  std::vector<int> next(kProducers, 0);
  for (const std::string& frame : written) {
    const int p = std::stoi(frame.substr(0, frame.find(':')));
    REQUIRE(std::stoi(frame.substr(frame.find(':') + 1)) == next[p]);
    ++next[p];
  }
}

TEST_CASE("an unencoded notify counts its estimate against the byte limit") {
  const auto envelope = text_envelope(std::string(1000, 'x'));
  const std::size_t charge = transport::notify_size_estimate(*envelope);
  CHECK(OutgoingFrame::notify(envelope, "bob").charge() == charge);
  CHECK(charge >= transport::encode_notify(*envelope, "bob").size());
  SendQueue queue({.max_frames = 100, .max_bytes = 2 * charge});
  REQUIRE(queue.push(OutgoingFrame::notify(envelope, "bob")) ==
          SendQueue::Push::kStartWriter);
  REQUIRE(queue.push(OutgoingFrame::notify(envelope, "carol")) ==
          SendQueue::Push::kQueued);
  CHECK(queue.bytes() == 2 * charge);
  CHECK(queue.push(std::string("x")) == SendQueue::Push::kOverflow);
  REQUIRE(pop_one(queue));
  CHECK(queue.bytes() == charge);
  CHECK(queue.push(std::string("x")) == SendQueue::Push::kQueued);
}

TEST_CASE(
    "over the queues' shared total, a queue holding frames refuses one, an "
    "empty queue still takes one, and pops and closes give bytes back") {
  transport::SendQueueTotal total(100);
  SendQueue behind({}, &total);
  SendQueue keeping_up({}, &total);
  REQUIRE(behind.push(std::string(60, 'a')) == SendQueue::Push::kStartWriter);
  REQUIRE(behind.push(std::string(30, 'b')) == SendQueue::Push::kQueued);
  CHECK(total.bytes == 90);
  // 110 would be over the total: refused where frames wait already...
  CHECK(behind.push(std::string(20, 'c')) == SendQueue::Push::kOverflow);
  // ...but not for a client that has kept up.
  CHECK(keeping_up.push(std::string(20, 'd')) == SendQueue::Push::kStartWriter);
  CHECK(total.bytes == 110);
  REQUIRE(pop_one(behind));
  CHECK(total.bytes == 50);
  CHECK(behind.push(std::string(20, 'c')) == SendQueue::Push::kQueued);
  behind.close();
  CHECK(total.bytes == 20);
  REQUIRE(pop_one(keeping_up));
  CHECK(total.bytes == 0);
}

TEST_CASE("a closed queue drops its notifies and their envelopes") {
  const auto envelope = text_envelope("hi");
  SendQueue queue({});
  REQUIRE(queue.push(OutgoingFrame::notify(envelope, "bob")) ==
          SendQueue::Push::kStartWriter);
  queue.close();
  CHECK(envelope.use_count() == 1);
  CHECK_FALSE(pop_one(queue));
  CHECK(queue.push(OutgoingFrame::notify(envelope, "bob")) ==
        SendQueue::Push::kClosed);
}

}  // namespace
}  // namespace parley
