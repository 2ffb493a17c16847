// Which receipt acks a connection writes, and when. A cursor only moves
// forward, to the greatest acked envelope id of its (agent, channel), so of
// several acks for one (agent, channel) only the greatest needs writing:
// while one batch of a connection's acks is being written, the acks that
// arrive are held, each (agent, channel) keeping its greatest id, and are
// written as the next batch once it is done. A request of the connection
// takes the held acks first, so the hub still sees every ack before the
// requests the client sent after it.
//
// Thread-safe: receipts and requests arrive on the connection's strand,
// batches finish on a hub thread.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace parley::transport {

struct ReceiptAck {
  std::string recipient_id;
  std::string channel_id;
  std::string envelope_id;
};

class ReceiptCoalescer {
 public:
  // An ack arrived: what to write now as one batch (empty: it is held).
  std::vector<ReceiptAck> add(ReceiptAck ack);
  // A request arrived: the held acks, to write now as one batch.
  std::vector<ReceiptAck> take_held();
  // A batch is written: the next batch to write (empty: none).
  std::vector<ReceiptAck> batch_done();

 private:
  std::vector<ReceiptAck> take_held_locked();

  std::mutex mutex_;
  int batches_in_flight_ = 0;  // guarded by mutex_
  // (recipient, channel) -> greatest held envelope id; guarded by mutex_
  std::map<std::pair<std::string, std::string>, std::string> held_;
};

}  // namespace parley::transport
