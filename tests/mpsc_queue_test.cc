// MpscQueue (engine/hub/mpsc_queue.h) hammered by many producers: nothing
// pushed is lost or taken twice, each producer's nodes come out in the
// order it pushed them, and the flag handshake the committer builds on it
// never strands a node.
#include "engine/hub/mpsc_queue.h"

#include <doctest/doctest.h>

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace parley {
namespace {

using engine::MpscQueue;

struct Node {
  int producer = 0;
  int index = 0;
  Node* queue_next = nullptr;
};

constexpr int kProducers = 8;
constexpr int kPerProducer = 20000;

// kProducers x kPerProducer nodes, nodes[p][i] pushed i-th by producer p.
std::vector<std::vector<Node>> make_nodes() {
  std::vector<std::vector<Node>> nodes(kProducers,
                                       std::vector<Node>(kPerProducer));
  for (int p = 0; p < kProducers; ++p) {
    for (int i = 0; i < kPerProducer; ++i) nodes[p][i] = {p, i, nullptr};
  }
  return nodes;
}

TEST_CASE("every node pushed is taken once, in each producer's order") {
  auto nodes = make_nodes();
  MpscQueue<Node> queue;
  std::atomic<int> started = 0;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      ++started;
      while (started < kProducers) {
      }
      for (Node& node : nodes[p]) queue.push(&node);
    });
  }
  // The consumer: next expected index per producer.
  std::vector<int> next(kProducers, 0);
  int taken = 0;
  int out_of_order = 0;
  int empty_takes = 0;
  while (taken < kProducers * kPerProducer) {
    Node* node = queue.take_all();
    if (node == nullptr) ++empty_takes;
    for (; node != nullptr; node = node->queue_next) {
      if (node->index != next[node->producer]) ++out_of_order;
      next[node->producer] = node->index + 1;
      ++taken;
    }
  }
  for (std::thread& producer : producers) producer.join();
  CHECK(out_of_order == 0);
  CHECK(taken == kProducers * kPerProducer);
  for (int p = 0; p < kProducers; ++p) CHECK(next[p] == kPerProducer);
  CHECK(queue.take_all() == nullptr);
  CHECK(queue.empty());
  MESSAGE("empty takes while producers ran: " << empty_takes);
}

// The committer's completion handshake (Committer::finish and
// complete_finished): a producer pushes, then claims the "posted" flag and
// schedules a consumer run if it was clear; a consumer run clears the flag,
// then takes the queue. A node pushed while a run takes the queue is either
// taken by it or finds the flag clear and schedules another run.
TEST_CASE("a push racing a consumer run is never stranded") {
  auto nodes = make_nodes();
  MpscQueue<Node> queue;
  std::atomic<bool> posted = false;
  std::atomic<int> scheduled_runs = 0;
  std::atomic<bool> producers_done = false;
  std::vector<int> seen(kProducers, 0);
  int duplicates = 0;
  int runs = 0;
  std::thread consumer([&] {
    for (;;) {
      int pending = scheduled_runs.load();
      if (pending == 0) {
        if (producers_done && scheduled_runs.load() == 0) return;
        std::this_thread::yield();
        continue;
      }
      --scheduled_runs;
      ++runs;
      posted = false;
      for (Node* node = queue.take_all(); node != nullptr;
           node = node->queue_next) {
        if (node->index != seen[node->producer]) ++duplicates;
        seen[node->producer] = node->index + 1;
      }
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (Node& node : nodes[p]) {
        queue.push(&node);
        if (!posted.exchange(true)) ++scheduled_runs;
      }
    });
  }
  for (std::thread& producer : producers) producer.join();
  producers_done = true;
  consumer.join();
  CHECK(duplicates == 0);
  for (int p = 0; p < kProducers; ++p) CHECK(seen[p] == kPerProducer);
  CHECK(queue.empty());
  MESSAGE("consumer runs: " << runs);
}

}  // namespace
}  // namespace parley
