#include "tests/crashtest/ack_check.h"

#include <map>
#include <unordered_map>

#include "tests/crashtest/record_token.h"

namespace parley::crashtest {

namespace {

constexpr std::size_t kMaxProblems = 10;

void note(AckCheck& check, std::string problem) {
  if (check.problems.size() < kMaxProblems) {
    check.problems.push_back(std::move(problem));
  }
}

}  // namespace

log::Result<AckCheck> check_acks(
    const log::LogStore& store,
    const std::vector<std::vector<AckedToken>>& generations) {
  AckCheck check;
  std::unordered_map<std::string, std::vector<std::uint64_t>> where;
  auto read =
      store.read(1, log::kLastSequence,
                 [&](std::uint64_t sequence, std::string_view record) {
                   where[record_token(sequence, record)].push_back(sequence);
                   ++check.records;
                   return true;
                 });
  if (!read) return std::unexpected(read.error());
  if (check.records != store.last_sequence()) {
    note(check, "the log holds " + std::to_string(check.records) +
                    " records, its last sequence is " +
                    std::to_string(store.last_sequence()));
  }
  for (const auto& [token, sequences] : where) {
    if (sequences.size() > 1 && token_is_unique(token)) {
      ++check.duplicated;
      note(check, token + " is in the log " + std::to_string(sequences.size()) +
                      " times");
    }
  }
  for (std::size_t g = 0; g < generations.size(); ++g) {
    std::map<char, std::uint64_t> last_of_stream;
    for (const AckedToken& ack : generations[g]) {
      ++check.acked;
      auto found = where.find(ack.token);
      if (found == where.end()) {
        ++check.lost;
        note(check, "generation " + std::to_string(g) + " acked " + ack.token +
                        ", which is not in the log");
        continue;
      }
      if (found->second.size() > 1 && !token_is_unique(ack.token)) {
        ++check.duplicated;
        note(check, "acked " + ack.token + " is in the log " +
                        std::to_string(found->second.size()) + " times");
      }
      const std::uint64_t at = found->second.front();
      std::uint64_t& last = last_of_stream[ack.stream];
      if (at <= last) {
        ++check.out_of_order;
        note(check, "generation " + std::to_string(g) + " stream " +
                        ack.stream + ": " + ack.token + " at log sequence " +
                        std::to_string(at) + ", acked after log sequence " +
                        std::to_string(last));
      }
      last = at;
    }
  }
  return check;
}

}  // namespace parley::crashtest
