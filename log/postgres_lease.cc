#include "log/postgres_lease.h"

#include <poll.h>

#include <algorithm>
#include <array>
#include <optional>

#include "log/postgres_schema.h"
#include "log/thread_name.h"

namespace parley::log::postgres_backend {
namespace {

using std::chrono::milliseconds;

// Ends every session holding the writer's lock of this store once its
// lease has lapsed, waiting up to 5 s for each to exit; returns how many
// ended. $1: kLockClass.
constexpr const char* kEndLapsedWriter = R"sql(
SELECT count(*) FILTER (WHERE ended) FROM (
  SELECT pg_terminate_backend(l.pid, 5000) AS ended
  FROM pg_locks l
  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
    AND l.database = (SELECT oid FROM pg_database
                      WHERE datname = current_database())
    AND l.classid = $1::bigint::oid
    AND l.objid = hashtext(current_schema())::oid
    AND (SELECT lease_until FROM parley_writer) < clock_timestamp()) ends
)sql";

// Pushes the lease of the writer holding epoch $1 to $2 ms past the
// database's clock; no row when another writer has bumped the epoch.
constexpr const char* kRenewLease =
    "UPDATE parley_writer SET lease_until = clock_timestamp() + "
    "$2::bigint * interval '1 millisecond' WHERE epoch = $1 RETURNING epoch";

std::string ms_text(milliseconds value) {
  return std::to_string(value.count()) + " ms";
}

}  // namespace

Result<int> take_writer_lock(const Connection& connection,
                             const std::string& where,
                             const WriterLockPolicy& policy) {
  constexpr auto kRetryEvery = milliseconds(50);
  const bool forever = policy.patience == milliseconds::max();
  const auto deadline = std::chrono::steady_clock::now() +
                        (forever ? milliseconds(0) : policy.patience);
  const std::array params{int8_param(kLockClass)};
  int ended = 0;
  while (true) {
    auto locked = connection.exec(
        "taking the writer's lock",
        "SELECT pg_try_advisory_lock($1::integer, hashtext(current_schema()))",
        params);
    if (!locked) return std::unexpected(locked.error());
    if (PQgetvalue(locked->get(), 0, 0)[0] == 1) return ended;
    if (policy.end_lapsed_writer) {
      auto ending = connection.exec("ending the session of a lapsed writer",
                                    kEndLapsedWriter, params);
      if (!ending) return std::unexpected(ending.error());
      const auto count = get_int8(ending->get(), 0, 0).value_or(0);
      if (count > 0) {
        ended += static_cast<int>(count);
        continue;  // its lock is free now
      }
    }
    if (policy.stop.stop_requested() ||
        (!forever && std::chrono::steady_clock::now() >= deadline)) {
      return std::unexpected(Error{
          ErrorCode::kBusy,
          where +
              " is held by another writer (a live hub holds its "
              "advisory lock" +
              (policy.end_lapsed_writer ? " and renews its lease" : "") + ")"});
    }
    std::this_thread::sleep_for(kRetryEvery);
  }
}

LeaseKeeper::LeaseKeeper(std::string conninfo, std::string where,
                         std::uint64_t epoch, milliseconds timeout, Lost lost)
    : conninfo_(std::move(conninfo)),
      where_(std::move(where)),
      epoch_(epoch),
      timeout_(timeout),
      lost_(std::move(lost)),
      thread_([this] {
        name_current_thread("parley-lease");
        run();
      }) {}

void LeaseKeeper::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LeaseKeeper::run() {
  const milliseconds every = timeout_ / 3;
  constexpr milliseconds kRetryAfterFailure{100};
  // The open that took the store set the lease just before this started.
  SteadyClock::time_point last_sent = SteadyClock::now();
  SteadyClock::time_point next = last_sent + every;
  std::optional<Error> gone;
  std::unique_lock lock(mutex_);
  while (!gone) {
    if (wake_.wait_until(lock, next, [&] { return stopping_; })) return;
    lock.unlock();
    const SteadyClock::time_point sent = SteadyClock::now();
    std::string why;
    // Woken past the lease (the process was paused or starved): another
    // writer may hold the store already, whatever a renewal would say.
    Renewal renewal = Renewal::kFailed;
    if (sent < last_sent + timeout_) {
      renewal = renew(last_sent + timeout_, why);
    } else {
      why =
          "this writer did not run in time to renew it: was its process "
          "paused?";
    }
    lock.lock();
    if (stopping_) return;
    if (renewal == Renewal::kRenewed) {
      last_sent = sent;
      next = sent + every;
    } else if (renewal == Renewal::kFenced) {
      gone = Error{ErrorCode::kFailed,
                   "this writer was fenced: another writer took " + where_ +
                       " over (the writer epoch is no longer " +
                       std::to_string(epoch_) +
                       "); this store never writes again"};
    } else if (SteadyClock::now() >= last_sent + timeout_) {
      gone = Error{ErrorCode::kFailed,
                   "the writer's lease on " + where_ +
                       " lapsed: no renewal succeeded within " +
                       ms_text(timeout_) + " (" + why +
                       "); another hub may take the store over, so this "
                       "store never writes again"};
    } else {
      next = SteadyClock::now() + kRetryAfterFailure;
    }
  }
  lock.unlock();
  lost_(std::move(*gone));
}

LeaseKeeper::Renewal LeaseKeeper::renew(SteadyClock::time_point deadline,
                                        std::string& why) {
  if (!connection_.ok()) {
    // No longer than the lease lasts, as the renewal below.
    auto connected = Connection::connect(conninfo_, false, {}, deadline);
    if (!connected) {
      why = connected.error().message;
      return Renewal::kFailed;
    }
    connection_ = std::move(*connected);
  }
  const std::array params{
      int8_param(epoch_),
      int8_param(static_cast<std::uint64_t>(timeout_.count()))};
  const ParamArrays arrays(params);
  PGconn* conn = connection_.get();
  auto give_up = [&](std::string reason) {
    why = std::move(reason);
    connection_ = Connection{};  // a half-answered session is not reused
    return Renewal::kFailed;
  };
  if (PQsendQueryParams(conn, kRenewLease, arrays.count(), arrays.types.data(),
                        arrays.values.data(), arrays.lengths.data(),
                        arrays.formats.data(), 1) != 1) {
    return give_up("renewing the lease failed: " + connection_.error_message());
  }
  // Waits for the answer no longer than the lease lasts: a server that
  // went silent (a partition) must not hold the keeper past it.
  while (true) {
    if (PQconsumeInput(conn) != 1) {
      return give_up("renewing the lease failed: " +
                     connection_.error_message());
    }
    if (PQisBusy(conn) == 0) break;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return give_up("stopped");
    }
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
    if (left <= milliseconds(0)) {
      return give_up("PostgreSQL did not answer a renewal in time");
    }
    pollfd socket{PQsocket(conn), POLLIN, 0};
    (void)::poll(&socket, 1,
                 static_cast<int>(std::min(left, milliseconds(50)).count()));
  }
  ResultPtr result(PQgetResult(conn));
  while (ResultPtr rest{PQgetResult(conn)}) {
  }
  const ExecStatusType status =
      result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK) {
    why = result_error(connection_, "renewing the lease", result.get()).message;
    return Renewal::kFailed;
  }
  return PQntuples(result.get()) == 1 ? Renewal::kRenewed : Renewal::kFenced;
}

}  // namespace parley::log::postgres_backend
