#include "engine/transport/receipt_coalescer.h"

namespace parley::transport {

std::vector<ReceiptAck> ReceiptCoalescer::add(ReceiptAck ack) {
  std::lock_guard lock(mutex_);
  if (batches_in_flight_ == 0) {
    ++batches_in_flight_;
    return {std::move(ack)};
  }
  std::string& held =
      held_[{std::move(ack.recipient_id), std::move(ack.channel_id)}];
  if (ack.envelope_id > held) held = std::move(ack.envelope_id);
  return {};
}

std::vector<ReceiptAck> ReceiptCoalescer::take_held() {
  std::lock_guard lock(mutex_);
  return take_held_locked();
}

std::vector<ReceiptAck> ReceiptCoalescer::batch_done() {
  std::lock_guard lock(mutex_);
  --batches_in_flight_;
  if (batches_in_flight_ > 0) return {};
  return take_held_locked();
}

std::vector<ReceiptAck> ReceiptCoalescer::take_held_locked() {
  std::vector<ReceiptAck> batch;
  if (held_.empty()) return batch;
  batch.reserve(held_.size());
  for (auto& [key, envelope_id] : held_) {
    batch.push_back({key.first, key.second, std::move(envelope_id)});
  }
  held_.clear();
  ++batches_in_flight_;
  return batch;
}

}  // namespace parley::transport
