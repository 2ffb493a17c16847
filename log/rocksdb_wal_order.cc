#include "log/rocksdb_wal_order.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "log/rocksdb_layout.h"

namespace parley::log::rocksdb_backend {
namespace {

namespace layout = rocksdb_layout;

// The first and last log sequence a write batch puts in the log family,
// and whether they are consecutive in between.
class LogKeys final : public rocksdb::WriteBatch::Handler {
 public:
  explicit LogKeys(std::uint32_t log_family) : log_family_(log_family) {}

  std::optional<std::uint64_t> first;
  std::optional<std::uint64_t> last;
  bool dense = true;

  rocksdb::Status PutCF(std::uint32_t family, const rocksdb::Slice& key,
                        const rocksdb::Slice&) override {
    if (family != log_family_) return rocksdb::Status::OK();
    const auto sequence =
        layout::decode_be64(std::string_view(key.data(), key.size()));
    if (!sequence) {
      dense = false;
      return rocksdb::Status::OK();
    }
    if (last && *sequence != *last + 1) dense = false;
    if (!first) first = sequence;
    last = sequence;
    return rocksdb::Status::OK();
  }
  // A store's batches hold only puts; anything else leaves the log alone.
  rocksdb::Status DeleteCF(std::uint32_t, const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  rocksdb::Status SingleDeleteCF(std::uint32_t,
                                 const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteRangeCF(std::uint32_t, const rocksdb::Slice&,
                                const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  rocksdb::Status MergeCF(std::uint32_t, const rocksdb::Slice&,
                          const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }

 private:
  const std::uint32_t log_family_;
};

std::string wal_name(std::uint64_t number) {
  return "#" + std::to_string(number);
}

}  // namespace

void WalSealSync::attach(rocksdb::DB* db) {
  MutexLock lock(mutex_);
  db_ = db;
}

std::optional<rocksdb::Status> WalSealSync::failure() const {
  MutexLock lock(mutex_);
  return failure_;
}

void WalSealSync::OnMemTableSealed(const rocksdb::MemTableInfo&) {
  MutexLock lock(mutex_);
  if (db_ == nullptr) return;
  rocksdb::Status status = db_->SyncWAL();
  if (!status.ok() && !failure_) failure_ = std::move(status);
}

void LogReplayCheck::ColumnFamilyLogNumberMap(
    const std::map<std::uint32_t, std::uint64_t>&,
    const std::map<std::string, std::uint32_t>& cf_name_id_map) {
  const auto log = cf_name_id_map.find(std::string(layout::kLogFamily));
  if (log != cf_name_id_map.end()) log_family_ = log->second;
}

LogReplayCheck::WalProcessingOption LogReplayCheck::LogRecordFound(
    unsigned long long log_number, const std::string&,
    const rocksdb::WriteBatch& batch, rocksdb::WriteBatch*, bool*) {
  if (!log_family_) return WalProcessingOption::kContinueProcessing;
  LogKeys keys(*log_family_);
  if (!batch.Iterate(&keys).ok() || !keys.dense) {
    // Not a batch of appends: whatever follows starts a new run.
    last_ = 0;
    return WalProcessingOption::kContinueProcessing;
  }
  if (!keys.first) return WalProcessingOption::kContinueProcessing;
  if (last_ != 0 && *keys.first != last_ + 1) {
    const bool one_file = last_wal_ == log_number;
    const std::string files = one_file
                                  ? " within WAL file " + wal_name(log_number)
                                  : " from WAL file " + wal_name(last_wal_) +
                                        " to WAL file " + wal_name(log_number);
    if (*keys.first > last_ + 1) {
      const std::uint64_t first_missing = last_ + 1;
      const std::uint64_t last_missing = *keys.first - 1;
      gap_ = "the RocksDB WAL files skip log sequence" +
             (first_missing == last_missing
                  ? " " + std::to_string(first_missing)
                  : "s " + std::to_string(first_missing) + ".." +
                        std::to_string(last_missing)) +
             files +
             (one_file ? std::string()
                       : " (the older file lost records the newer one "
                         "follows)");
    } else {
      gap_ = "the RocksDB WAL files go back from log sequence " +
             std::to_string(last_) + " to " + std::to_string(*keys.first) +
             files;
    }
    return WalProcessingOption::kCorruptedRecord;
  }
  last_ = *keys.last;
  last_wal_ = log_number;
  return WalProcessingOption::kContinueProcessing;
}

}  // namespace parley::log::rocksdb_backend
