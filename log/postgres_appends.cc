// The PostgreSQL LogStore's write side: sequencing, the group commit (one
// transaction per group, sent as one pipeline) and close.
#include <array>
#include <chrono>

#include "log/postgres_schema.h"
#include "log/postgres_store.h"

namespace parley::log::postgres_backend {
namespace {

constexpr const char* kInsertLog =
    "INSERT INTO parley_log (log_sequence, record) "
    "SELECT * FROM unnest($1::bigint[], $2::bytea[])";
constexpr const char* kInsertChannelIndex =
    "INSERT INTO parley_channel_index (channel, channel_sequence, "
    "log_sequence) SELECT * FROM unnest($1::bytea[], $2::bigint[], "
    "$3::bigint[])";
constexpr const char* kInsertIdempotency =
    "INSERT INTO parley_idempotency (key, log_sequence) "
    "SELECT * FROM unnest($1::bytea[], $2::bigint[])";

// Queues one statement on a connection in pipeline mode.
bool send(const Connection& connection, const char* sql,
          std::span<const Param> params = {}) {
  const ParamArrays arrays(params);
  return PQsendQueryParams(connection.get(), sql, arrays.count(),
                           arrays.types.data(), arrays.values.data(),
                           arrays.lengths.data(), arrays.formats.data(),
                           1) == 1;
}

}  // namespace

PostgresLogStore::PostgresLogStore(std::string conninfo, std::string where,
                                   std::optional<Connection> writer,
                                   bool read_only, std::uint64_t last_sequence,
                                   std::uint64_t epoch,
                                   const PostgresOptions& options)
    : where_(std::move(where)),
      read_only_(read_only),
      epoch_(epoch),
      pool_(conninfo, read_only),
      writer_(std::move(writer)),
      sequencer_(last_sequence),
      last_sequence_(last_sequence),
      on_writer_lost_(options.on_writer_lost) {
  if (!read_only_) {
    keeper_ = std::make_unique<LeaseKeeper>(
        std::move(conninfo), where_, epoch_, options.lease_timeout,
        [this](Error why) { lose_writer(std::move(why)); });
  }
}

void PostgresLogStore::lose_writer(Error why) {
  {
    MutexLock lock(mutex_);
    if (!failed_) failed_ = why;
  }
  if (on_writer_lost_) on_writer_lost_(why);
}

Result<std::vector<Position>> PostgresLogStore::append(
    std::span<AppendEntry> batch, const SequencedCallback& on_sequenced) {
  auto sequenced = sequence(batch, {});
  if (!sequenced) return std::unexpected(sequenced.error());
  auto& [positions, group] = *sequenced;
  if (on_sequenced) on_sequenced(positions);
  if (!group) return std::move(positions);  // an empty batch
  if (auto written = finish(group); !written) {
    return std::unexpected(written.error());
  }
  return std::move(positions);
}

Result<std::vector<Position>> PostgresLogStore::append_deferred(
    std::span<AppendEntry> batch, DurableCallback on_durable) {
  auto sequenced = sequence(batch, std::move(on_durable));
  if (!sequenced) return std::unexpected(sequenced.error());
  auto& [positions, group] = *sequenced;
  if (!group) on_durable({});  // an empty batch: sequence() left it to us
  return std::move(positions);
}

Result<std::pair<std::vector<Position>, PostgresLogStore::GroupPtr>>
PostgresLogStore::sequence(std::span<AppendEntry> batch,
                           DurableCallback&& on_durable) {
  if (read_only_) {
    if (closed_) return closed_error();
    return std::unexpected(Error{
        ErrorCode::kReadOnly,
        "the store " + where_ + " is open read-only; nothing was written"});
  }
  if (auto checked = Sequencer::check_entries(batch); !checked) {
    return std::unexpected(checked.error());
  }
  MutexLock lock(mutex_);
  if (closed_) return closed_error();
  if (failed_) return std::unexpected(*failed_);
  auto positions = sequencer_.assign(batch, lookups_);
  if (!positions) return std::unexpected(positions.error());
  if (batch.empty()) return std::pair{std::move(*positions), GroupPtr()};
  if (!open_group_) open_group_ = std::make_shared<Group>();
  open_group_->members.push_back({batch, *positions, std::move(on_durable)});
  return std::pair{std::move(*positions), open_group_};
}

Result<void> PostgresLogStore::flush() {
  GroupPtr group;
  {
    MutexLock lock(mutex_);
    group = open_group_ ? open_group_ : writing_group_;
    if (!group) {
      if (failed_) return std::unexpected(*failed_);
      return {};
    }
  }
  return finish(group);
}

Result<void> PostgresLogStore::resume() {
  MutexLock lock(mutex_);
  if (closed_) return closed_error();
  if (failed_) return std::unexpected(*failed_);
  return {};
}

Result<void> PostgresLogStore::finish(const GroupPtr& group) {
  MutexLock lock(mutex_);
  if (group == open_group_ && !group->has_leader) {
    group->has_leader = true;
    const bool leads_now = !leader_active_;
    leader_active_ = true;
    lock.unlock();
    if (!leads_now) group->leader_turn.wait();
    return lead(group);
  }
  lock.unlock();
  group->done.wait();
  return group->outcome;
}

// Seals `group` and writes it as one transaction. Runs on the thread that
// claimed it once no other leader is active; hands the lead to the next
// group's claimant, if it has one, when done.
Result<void> PostgresLogStore::lead(const GroupPtr& group) {
  MutexLock lock(mutex_);
  ++finishing_;
  if (open_group_ == group) open_group_.reset();  // later batches: next group
  writing_group_ = group;
  const std::optional<Error> refused = failed_;
  lock.unlock();
  const std::vector<Member>& members = group->members;
  const auto started = std::chrono::steady_clock::now();
  Result<void> written =
      refused ? std::unexpected(*refused) : write_group(members);
  if (written) {
    commit_stats_.record(members.back().positions.back().log_sequence -
                             members.front().positions.front().log_sequence + 1,
                         std::chrono::steady_clock::now() - started);
  }
  lock.lock();
  if (written) {
    for (const Member& member : members) {
      for (const AppendEntry& entry : member.batch) {
        if (!entry.idempotency_key.empty()) {
          sequencer_.key_committed(entry.idempotency_key);
        }
      }
    }
    last_sequence_ = members.back().positions.back().log_sequence;
  } else if (!refused) {
    // The sequencer has numbered past this group: nothing may follow it.
    failed_ = Error{ErrorCode::kFailed,
                    "log store failed: an earlier transaction failed (" +
                        written.error().message +
                        "); refusing appends until the store is reopened"};
  }
  group->outcome = written;
  writing_group_.reset();
  const GroupPtr next = open_group_;
  const bool hand_on = next && next->has_leader;
  leader_active_ = hand_on;
  lock.unlock();
  if (hand_on) next->leader_turn.set();
  // A told member may end its batch's storage: touch no batch after this.
  for (const Member& member : members) {
    if (member.on_durable) member.on_durable(group->outcome);
  }
  Result<void> outcome = group->outcome;
  {
    // The last touch of the store: once done is set, a waiter may close
    // and destroy it.
    MutexLock relock(mutex_);
    --finishing_;
    appended_.notify_all();
  }
  group->done.set();
  return outcome;
}

Result<void> PostgresLogStore::write_group(const std::vector<Member>& members) {
  std::vector<std::uint64_t> sequences;
  std::vector<std::string_view> records;
  std::vector<std::string_view> channels;
  std::vector<std::uint64_t> channel_sequences;
  std::vector<std::uint64_t> channel_log_sequences;
  std::vector<std::string_view> keys;
  std::vector<std::uint64_t> key_log_sequences;
  for (const Member& member : members) {
    for (std::size_t i = 0; i < member.batch.size(); ++i) {
      const AppendEntry& entry = member.batch[i];
      const Position& position = member.positions[i];
      sequences.push_back(position.log_sequence);
      records.push_back(entry.record);
      if (!entry.channel.empty()) {
        channels.push_back(entry.channel);
        channel_sequences.push_back(position.channel_sequence);
        channel_log_sequences.push_back(position.log_sequence);
      }
      if (!entry.idempotency_key.empty()) {
        keys.push_back(entry.idempotency_key);
        key_log_sequences.push_back(position.log_sequence);
      }
    }
  }
  const std::string range = "log sequences " +
                            std::to_string(sequences.front()) + ".." +
                            std::to_string(sequences.back());
  auto lost = [&](std::string why) -> Result<void> {
    writer_.reset();  // never written on again: PostgreSQL rolls it back
    return std::unexpected(
        Error{ErrorCode::kIoError, "log append of " + range + " to " + where_ +
                                       " failed: " + std::move(why)});
  };
  if (!writer_ || !writer_->ok()) {
    return lost(
        "the connection to PostgreSQL was lost before; nothing of it "
        "was written");
  }
  const Connection& writer = *writer_;
  // Statements in pipeline order; the last is COMMIT.
  std::vector<std::string_view> sent{"BEGIN"};
  bool queued = send(writer, "BEGIN");
  if (queued) {
    const std::array epoch{int8_param(epoch_)};
    queued = send(writer, "SELECT parley_check_epoch($1)", epoch);
    sent.push_back("checking the writer's epoch");
  }
  if (queued) {
    const std::array log_params{int8_array_param(sequences),
                                bytea_array_param(records)};
    queued = send(writer, kInsertLog, log_params);
    sent.push_back("inserting the records");
  }
  if (queued && !channels.empty()) {
    const std::array channel_params{int8_array_param(channel_sequences),
                                    int8_array_param(channel_log_sequences)};
    const std::array params{bytea_array_param(channels), channel_params[0],
                            channel_params[1]};
    queued = send(writer, kInsertChannelIndex, params);
    sent.push_back("inserting the channel index entries");
  }
  if (queued && !keys.empty()) {
    const std::array params{bytea_array_param(keys),
                            int8_array_param(key_log_sequences)};
    queued = send(writer, kInsertIdempotency, params);
    sent.push_back("inserting the idempotency keys");
  }
  if (queued) {
    queued = send(writer, "COMMIT");
    sent.push_back("COMMIT");
  }
  if (!queued || PQpipelineSync(writer.get()) != 1) {
    return lost("sending the transaction failed (" + writer.error_message() +
                "); nothing of it was committed");
  }
  for (std::size_t i = 0; i < sent.size(); ++i) {
    ResultPtr result(PQgetResult(writer.get()));
    const ExecStatusType status =
        result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      // The server refused statement i (it names why): it skipped the rest,
      // COMMIT included. A connection lost with no word from the server
      // may have taken COMMIT's answer with it.
      const char* state =
          result ? PQresultErrorField(result.get(), PG_DIAG_SQLSTATE) : nullptr;
      const bool server_refused = state != nullptr;
      Error error = result_error(writer, sent[i], result.get());
      if (server_refused && state == kFencedState) {
        writer_.reset();
        return std::unexpected(Error{
            ErrorCode::kFailed,
            "log append of " + range + " to " + where_ +
                " refused: this writer was fenced, another one opened the "
                "store since (" +
                error.message +
                "); nothing of it was written, and this store never writes "
                "again"});
      }
      if (!server_refused && !writer.ok()) {
        return lost(error.message +
                    "; the connection was lost with the transaction in "
                    "flight, so it may or may not have committed");
      }
      return lost(error.message +
                  "; PostgreSQL rolled the transaction back, nothing of it "
                  "was written");
    }
    ResultPtr end(PQgetResult(writer.get()));  // each query ends with null
  }
  ResultPtr synced(PQgetResult(writer.get()));
  if (!synced || PQresultStatus(synced.get()) != PGRES_PIPELINE_SYNC) {
    return lost("the pipeline did not end as sent (" + writer.error_message() +
                ")");
  }
  return {};
}

Result<void> PostgresLogStore::close() {
  if (keeper_) keeper_->stop();
  MutexLock lock(mutex_);
  if (closed_ && !writer_) return {};
  closed_ = true;
  if (open_group_) {
    // Deferred batches nobody has written yet: write them now.
    const GroupPtr group = open_group_;
    lock.unlock();
    (void)finish(group);  // failures reach the members
    lock.lock();
  }
  appended_.notify_all();
  while (leader_active_ || finishing_ != 0) lock.wait(appended_);
  if (writer_ && writer_->ok() && PQexitPipelineMode(writer_->get()) == 1) {
    // Released before close() returns, so a reopen right after finds the
    // lock free (ending the session frees it too, but only once the
    // server process has noticed).
    ResultPtr(PQexec(writer_->get(), "SELECT pg_advisory_unlock_all()"));
  }
  writer_.reset();
  pool_.clear();
  return {};
}

}  // namespace parley::log::postgres_backend
