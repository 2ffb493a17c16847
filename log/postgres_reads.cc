// The PostgreSQL LogStore's read side: reads by log and channel sequence,
// the raw scans `parley audit` uses, the indexes, and (read-only stores)
// following the writer.
//
// Every multi-row read runs a cursor in one read-only REPEATABLE READ
// transaction on a pooled connection, fetching kPageRows rows at a time,
// so a read sees one snapshot and holds at most one page in memory.
#include <algorithm>
#include <array>
#include <functional>
#include <thread>

#include "log/postgres_store.h"
#include "log/record_check.h"
#include "schemas/record.h"

namespace parley::log::postgres_backend {
namespace {

constexpr int kPageRows = 2048;

// Called per row of a page; false stops the read, an error ends it.
using RowVisitor = std::function<Result<bool>(const PGresult*, int row)>;

Result<void> for_each_row(ConnectionPool& pool, std::string_view what,
                          const std::string& query,
                          std::span<const Param> params,
                          const RowVisitor& visit) {
  auto lease = pool.acquire();
  if (!lease) return std::unexpected(lease.error());
  const Connection& connection = **lease;
  auto begun =
      connection.exec(what, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  if (!begun) return std::unexpected(begun.error());
  // Ends the transaction however the read ends; a connection left in one
  // is not returned to the pool.
  struct Ender {
    const Connection& connection;
    ~Ender() { (void)connection.exec("ending a read", "COMMIT"); }
  } ender{connection};
  auto declared = connection.exec(
      what, "DECLARE parley_read BINARY NO SCROLL CURSOR FOR " + query, params);
  if (!declared) return std::unexpected(declared.error());
  const std::string fetch =
      "FETCH FORWARD " + std::to_string(kPageRows) + " FROM parley_read";
  while (true) {
    auto page = connection.exec(what, fetch);
    if (!page) return std::unexpected(page.error());
    const int rows = PQntuples(page->get());
    for (int row = 0; row < rows; ++row) {
      auto more = visit(page->get(), row);
      if (!more) return std::unexpected(more.error());
      if (!*more) return {};
    }
    if (rows < kPageRows) return {};
  }
}

}  // namespace

Result<void> PostgresLogStore::check_open() const {
  if (group_commit_.closed()) return closed_error();
  return {};
}

Result<void> PostgresLogStore::read(std::uint64_t from, std::uint64_t to,
                                    const RecordVisitor& visit) const {
  if (auto open = check_open(); !open) return open;
  std::uint64_t expected = std::max<std::uint64_t>(from, 1);
  const std::uint64_t last =
      std::min<std::uint64_t>(to, group_commit_.last_sequence());
  if (expected > last) return {};
  const std::array params{int8_param(expected), int8_param(last)};
  std::vector<std::uint64_t> scratch;
  bool stopped = false;
  auto read = for_each_row(
      pool_, "reading the log",
      "SELECT log_sequence, record FROM parley_log "
      "WHERE log_sequence BETWEEN $1 AND $2 ORDER BY log_sequence",
      params, [&](const PGresult* page, int row) -> Result<bool> {
        const auto sequence = get_int8(page, row, 0);
        if (sequence != expected) {
          return std::unexpected(Error{
              ErrorCode::kCorruption,
              "log sequence " + std::to_string(expected) +
                  ": missing from the log (next key found: " +
                  (sequence ? std::to_string(*sequence) : "malformed") + ")"});
        }
        std::string_view record =
            schema::aligned_record(get_bytes(page, row, 1), scratch);
        if (auto checked = check_record(record, expected); !checked) {
          return std::unexpected(checked.error());
        }
        stopped = !visit(expected, record);
        ++expected;
        return !stopped;
      });
  if (!read || stopped) return read;
  if (expected <= last) {
    return std::unexpected(Error{
        ErrorCode::kCorruption,
        "log sequence " + std::to_string(expected) + ": missing from the log"});
  }
  return {};
}

Result<void> PostgresLogStore::read_channel(std::string_view channel,
                                            std::uint64_t from,
                                            std::uint64_t to,
                                            const ChannelVisitor& visit) const {
  if (auto open = check_open(); !open) return open;
  if (channel.size() > kMaxChannelIdBytes) return {};
  std::uint64_t expected = std::max<std::uint64_t>(from, 1);
  if (expected > to) return {};
  const std::array params{bytea_param(channel), int8_param(expected),
                          int8_param(int8_bound(to)),
                          int8_param(group_commit_.last_sequence())};
  std::vector<std::uint64_t> scratch;
  return for_each_row(
      pool_, "reading the channel index",
      "SELECT c.channel_sequence, c.log_sequence, l.record "
      "FROM parley_channel_index c LEFT JOIN parley_log l "
      "ON l.log_sequence = c.log_sequence "
      "WHERE c.channel = $1 AND c.channel_sequence BETWEEN $2 AND $3 "
      "AND c.log_sequence <= $4 ORDER BY c.channel_sequence",
      params, [&](const PGresult* page, int row) -> Result<bool> {
        auto corrupt = [&](const std::string& what) {
          return std::unexpected(
              Error{ErrorCode::kCorruption,
                    "channel index of " + std::string(channel) +
                        ", channel sequence " + std::to_string(expected) +
                        ": " + what});
        };
        const auto channel_sequence = get_int8(page, row, 0);
        const auto sequence = get_int8(page, row, 1);
        if (channel_sequence != expected) return corrupt("entry missing");
        if (!sequence) return corrupt("malformed log sequence");
        if (is_null(page, row, 2)) {
          return corrupt("points at log sequence " + std::to_string(*sequence) +
                         ", which is missing");
        }
        std::string_view record =
            schema::aligned_record(get_bytes(page, row, 2), scratch);
        if (auto checked = check_record(record, *sequence, expected);
            !checked) {
          return std::unexpected(checked.error());
        }
        return visit(expected++, *sequence, record);
      });
}

Result<void> PostgresLogStore::scan_log(const RecordVisitor& visit) const {
  if (auto open = check_open(); !open) return open;
  std::vector<std::uint64_t> scratch;
  return for_each_row(
      pool_, "scanning the log",
      "SELECT log_sequence, record FROM parley_log ORDER BY log_sequence", {},
      [&](const PGresult* page, int row) -> Result<bool> {
        return visit(*get_int8(page, row, 0),
                     schema::aligned_record(get_bytes(page, row, 1), scratch));
      });
}

// In the RocksDB backend's key order: id length, id bytes, sequence.
Result<void> PostgresLogStore::scan_channel_index(
    const ChannelIndexVisitor& visit) const {
  if (auto open = check_open(); !open) return open;
  return for_each_row(
      pool_, "scanning the channel index",
      "SELECT channel, channel_sequence, log_sequence "
      "FROM parley_channel_index "
      "ORDER BY octet_length(channel), channel, channel_sequence",
      {}, [&](const PGresult* page, int row) -> Result<bool> {
        return visit(get_bytes(page, row, 0), *get_int8(page, row, 1),
                     *get_int8(page, row, 2));
      });
}

Result<void> PostgresLogStore::scan_idempotency_index(
    const IdempotencyIndexVisitor& visit) const {
  if (auto open = check_open(); !open) return open;
  return for_each_row(
      pool_, "scanning the idempotency index",
      "SELECT key, log_sequence FROM parley_idempotency ORDER BY key", {},
      [&](const PGresult* page, int row) -> Result<bool> {
        return visit(get_bytes(page, row, 0), *get_int8(page, row, 1));
      });
}

Result<std::optional<std::uint64_t>> PostgresLogStore::find_idempotency_key(
    std::string_view key) const {
  if (auto open = check_open(); !open) return std::unexpected(open.error());
  return durable_find_key(key);
}

Result<std::optional<std::uint64_t>> PostgresLogStore::durable_find_key(
    std::string_view key) const {
  auto lease = pool_.acquire();
  if (!lease) return std::unexpected(lease.error());
  const std::array params{bytea_param(key)};
  auto found = (*lease)->exec(
      "reading the idempotency index",
      "SELECT log_sequence FROM parley_idempotency WHERE key = $1", params);
  if (!found) return std::unexpected(found.error());
  if (PQntuples(found->get()) == 0) return std::nullopt;
  return get_int8(found->get(), 0, 0);
}

Result<std::uint64_t> PostgresLogStore::last_channel_sequence(
    std::string_view channel) const {
  if (auto open = check_open(); !open) return std::unexpected(open.error());
  return durable_last_channel_sequence(channel);
}

Result<std::uint64_t> PostgresLogStore::durable_last_channel_sequence(
    std::string_view channel) const {
  if (channel.size() > kMaxChannelIdBytes) return 0;
  auto lease = pool_.acquire();
  if (!lease) return std::unexpected(lease.error());
  const std::array params{bytea_param(channel),
                          int8_param(group_commit_.last_sequence())};
  auto found =
      (*lease)->exec("reading the channel index",
                     "SELECT channel_sequence FROM parley_channel_index "
                     "WHERE channel = $1 AND log_sequence <= $2 "
                     "ORDER BY channel_sequence DESC LIMIT 1",
                     params);
  if (!found) return std::unexpected(found.error());
  if (PQntuples(found->get()) == 0) return 0;
  return get_int8(found->get(), 0, 0).value_or(0);
}

std::uint64_t PostgresLogStore::wait_for_append(
    std::uint64_t after, std::chrono::milliseconds timeout) const {
  // Nothing signals a reader of another process's commits: it polls.
  std::function<void()> poll;
  if (read_only_) poll = [this] { catch_up(); };
  return group_commit_.wait_for_append(after, timeout, poll);
}

void PostgresLogStore::catch_up() const {
  MutexLock lock(catch_up_mutex_);
  if (group_commit_.closed()) return;
  auto lease = pool_.acquire();
  if (!lease) return;  // the next catch-up retries
  auto found = (*lease)->exec("following the log",
                              "SELECT max(log_sequence) FROM parley_log");
  if (!found || PQntuples(found->get()) != 1) return;
  const auto last = get_int8(found->get(), 0, 0);
  if (last) group_commit_.caught_up(*last);
}

}  // namespace parley::log::postgres_backend
