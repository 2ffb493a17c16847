// A lock-free queue of intrusive nodes: any thread pushes, and one
// consumer at a time takes everything pushed so far, oldest first.
//
// T holds the link, `T* queue_next`, owned by the queue from push() until
// take_all() hands the node back. Every operation is sequentially
// consistent, so a producer that pushes and then checks a flag and a
// consumer that clears that flag and then checks empty() cannot both miss
// each other (engine/hub/committer.cc relies on it).
#pragma once

#include <atomic>

namespace parley::engine {

template <typename T>
class MpscQueue {
 public:
  void push(T* node) {
    node->queue_next = head_.load();
    while (!head_.compare_exchange_weak(node->queue_next, node)) {
    }
  }

  // Every node pushed so far, as a list linked by queue_next in push order;
  // nullptr when there is none.
  T* take_all() {
    T* newest_first = head_.exchange(nullptr);
    T* oldest_first = nullptr;
    while (newest_first != nullptr) {
      T* next = newest_first->queue_next;
      newest_first->queue_next = oldest_first;
      oldest_first = newest_first;
      newest_first = next;
    }
    return oldest_first;
  }

  bool empty() const { return head_.load() == nullptr; }

 private:
  std::atomic<T*> head_ = nullptr;
};

}  // namespace parley::engine
