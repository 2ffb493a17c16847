// The PostgreSQL LogStore's write side: the checks before an append is
// sequenced, the write of each group (log/group_commit.h leads it: one
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
    : conninfo_(conninfo),
      where_(std::move(where)),
      read_only_(read_only),
      epoch_(epoch),
      durability_(options.durability),
      pool_(conninfo, read_only, gave_up_.get_token()),
      writer_(std::move(writer)),
      group_commit_(
          last_sequence,
          {.last_channel_sequence =
               [this](std::string_view channel) {
                 return durable_last_channel_sequence(channel);
               },
           .key_exists = [this](std::string_view key) -> Result<bool> {
             auto sequence = durable_find_key(key);
             if (!sequence) return std::unexpected(sequence.error());
             return sequence->has_value();
           }},
          [this](const std::vector<GroupCommit::Member>& members) {
            return write(members);
          }),
      on_writer_lost_(options.on_writer_lost) {
  if (writer_) writer_->give_up_on(gave_up_.get_token());
  if (!read_only_) {
    keeper_ = std::make_unique<LeaseKeeper>(
        std::move(conninfo), where_, epoch_, options.lease_timeout,
        [this](Error why) { lose_writer(std::move(why)); });
  }
}

void PostgresLogStore::lose_writer(Error why) {
  // First: a sequencer lookup blocked on the server may hold the group
  // commit's mutex, which fail() takes.
  gave_up_.request_stop();
  group_commit_.fail(why);
  if (on_writer_lost_) on_writer_lost_(why);
}

Result<std::vector<Position>> PostgresLogStore::append(
    std::span<AppendEntry> batch, const SequencedCallback& on_sequenced) {
  if (auto admitted = admit(batch); !admitted) {
    return std::unexpected(admitted.error());
  }
  return group_commit_.append(batch, on_sequenced);
}

Result<void> PostgresLogStore::append_deferred(std::span<AppendEntry> batch,
                                               DurableCallback on_durable) {
  if (auto admitted = admit(batch); !admitted) return admitted;
  return group_commit_.append_deferred(batch, std::move(on_durable));
}

Result<void> PostgresLogStore::admit(std::span<AppendEntry> batch) const {
  if (read_only_) {
    if (group_commit_.closed()) return closed_error();
    return std::unexpected(Error{
        ErrorCode::kReadOnly,
        "the store " + where_ + " is open read-only; nothing was written"});
  }
  return Sequencer::check_entries(batch);
}

Result<void> PostgresLogStore::flush() { return group_commit_.flush(); }

Result<void> PostgresLogStore::resume() {
  return group_commit_.resume([this] { return reconnect_writer(); });
}

Result<std::uint64_t> PostgresLogStore::reconnect_writer() {
  auto unavailable = [&](const std::string& why) {
    return std::unexpected(
        Error{ErrorCode::kUnavailable,
              "reconnecting to " + where_ + " failed (" + why +
                  "); appends are refused until the store reconnects"});
  };
  if (gave_up_.stop_requested()) {
    return std::unexpected(
        Error{ErrorCode::kFailed, "this writer lost " + where_ + " for good"});
  }
  const auto now = Connection::Clock::now();
  if (now < next_reconnect_) return unavailable("tried less than 1 s ago");
  next_reconnect_ = now + kReconnectEvery;
  auto writer = Connection::connect(conninfo_, false, gave_up_.get_token());
  if (!writer) return unavailable(writer.error().message);
  // Free once the lost session has ended (its transaction is then final);
  // until then, or while another writer holds it, not this time.
  auto locked = take_writer_lock(*writer, where_,
                                 {.patience = std::chrono::milliseconds(0),
                                  .stop = gave_up_.get_token(),
                                  .end_lapsed_writer = false});
  if (!locked) return unavailable(locked.error().message);
  // Taken over meanwhile: the new writer bumped the epoch.
  auto epoch = writer->exec("reading the writer epoch",
                            "SELECT epoch FROM parley_writer");
  if (!epoch) return unavailable(epoch.error().message);
  const auto current = PQntuples(epoch->get()) == 1
                           ? get_int8(epoch->get(), 0, 0)
                           : std::nullopt;
  if (current != epoch_) {
    return std::unexpected(Error{
        ErrorCode::kFailed,
        "this writer was fenced while it reconnected: another writer took " +
            where_ + " over; this store never writes again"});
  }
  auto last = find_last_sequence(*writer);
  if (!last) {
    if (last.error().code == ErrorCode::kCorruption) return last;
    return unavailable(last.error().message);
  }
  if (auto started = start_writing(*writer, durability_, where_); !started) {
    return unavailable(started.error().message);
  }
  MutexLock lock(close_mutex_);
  writer_ = std::move(*writer);
  return *last;
}

GroupCommit::WriteResult PostgresLogStore::write(
    const std::vector<GroupCommit::Member>& members) {
  Result<void> written = write_group(members);
  if (written) return {};
  if (written.error().code == ErrorCode::kUnavailable) {
    return std::unexpected(GroupCommit::WriteFailure{
        .told = written.error(),
        .refusal = Error{ErrorCode::kUnavailable,
                         "the connection to " + where_ +
                             " was lost; appends are refused until the store "
                             "reconnects (" +
                             written.error().message + ")"},
        .resumable = true});
  }
  return std::unexpected(GroupCommit::WriteFailure{
      .told = written.error(),
      .refusal = Error{ErrorCode::kFailed,
                       "log store failed: an earlier transaction failed (" +
                           written.error().message +
                           "); refusing appends until the store is reopened"},
      .resumable = false});
}

Result<void> PostgresLogStore::write_group(
    const std::vector<GroupCommit::Member>& members) {
  std::vector<std::uint64_t> sequences;
  std::vector<std::string_view> records;
  std::vector<std::string_view> channels;
  std::vector<std::uint64_t> channel_sequences;
  std::vector<std::uint64_t> channel_log_sequences;
  std::vector<std::string_view> keys;
  std::vector<std::uint64_t> key_log_sequences;
  for (const GroupCommit::Member& member : members) {
    for (const AppendEntry& entry : member.batch) {
      const Position& position = entry.position;
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
  // Never written on again: PostgreSQL rolls back what it did not commit.
  // A connection that is gone (a server restart, an ended session, a
  // network failure) pauses the store until resume() reconnects; a server
  // that refused a statement on a live connection fails it.
  bool session_ended = false;  // the server said so (a FATAL error)
  auto lost = [&](std::string why) -> Result<void> {
    const bool gone = session_ended || !writer_ || !writer_->ok();
    writer_.reset();
    return std::unexpected(Error{gone && !gave_up_.stop_requested()
                                     ? ErrorCode::kUnavailable
                                     : ErrorCode::kIoError,
                                 "log append of " + range + " to " + where_ +
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
  // The connection is non-blocking (postgres_open.cc): these waits stop
  // once the store gives up its writer, however long the server is silent.
  auto in_flight = [&](const Error& error) {
    return lost(error.message +
                "; the transaction was in flight, so it may or may not have "
                "committed");
  };
  if (auto flushed = writer.flush(); !flushed) {
    return in_flight(flushed.error());
  }
  for (std::size_t i = 0; i < sent.size(); ++i) {
    if (auto ready = writer.wait_for_result(); !ready) {
      return in_flight(ready.error());
    }
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
      // A FATAL error ends the session (a restart, pg_terminate_backend)
      // before libpq has seen the socket close.
      const char* severity =
          result
              ? PQresultErrorField(result.get(), PG_DIAG_SEVERITY_NONLOCALIZED)
              : nullptr;
      session_ended =
          severity != nullptr && (std::string_view(severity) == "FATAL" ||
                                  std::string_view(severity) == "PANIC");
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
    // Each query's results end with a null; then comes the sync.
    if (auto ready = writer.wait_for_result(); !ready) {
      return in_flight(ready.error());
    }
    ResultPtr end(PQgetResult(writer.get()));
  }
  if (auto ready = writer.wait_for_result(); !ready) {
    return in_flight(ready.error());
  }
  ResultPtr synced(PQgetResult(writer.get()));
  if (!synced || PQresultStatus(synced.get()) != PGRES_PIPELINE_SYNC) {
    // Every statement was answered, COMMIT included: nothing is left for
    // the server to refuse, so the session ended (a restart's FATAL, or
    // no word) before the pipeline did.
    session_ended = true;
    return lost("the pipeline did not end as sent (" + writer.error_message() +
                "), after COMMIT was answered: the transaction committed");
  }
  return {};
}

Result<void> PostgresLogStore::close() {
  // The keeper renews until the writer connection is done with: a server
  // that stops answering meanwhile lets the lease lapse, the keeper gives
  // the writer up, and the waits below stop.
  (void)group_commit_.close();
  {
    // No leader writes any more: the writer connection is close()'s.
    // Closes that come after the first find nothing left to do.
    MutexLock lock(close_mutex_);
    if (writer_ && writer_->ok() && !gave_up_.stop_requested() &&
        PQexitPipelineMode(writer_->get()) == 1) {
      // Released before close() returns, so a reopen right after finds the
      // lock free (ending the session frees it too, but only once the
      // server process has noticed).
      (void)writer_->exec("releasing the writer's lock",
                          "SELECT pg_advisory_unlock_all()");
    }
    writer_.reset();
  }
  if (keeper_) keeper_->stop();
  pool_.clear();
  return {};
}

}  // namespace parley::log::postgres_backend
