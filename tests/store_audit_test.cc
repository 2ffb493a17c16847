// `parley audit`: replay/store_audit.h on healthy and deliberately damaged
// stores, and the command line. Damage is real: records and index entries
// are rewritten or deleted in RocksDB directly.
#include "replay/store_audit.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "log/rocksdb_layout.h"
#include "log/rocksdb_log_store.h"
#include "tests/hub_fixture.h"
#include "tests/test_support.h"
#include "tools/script_runner.h"

namespace parley {
namespace {

namespace fs = std::filesystem;
namespace layout = log::rocksdb_layout;

using Run = testing::CommandRun;

Run parley(const std::string& arguments) {
  return testing::run_command(std::string(PARLEY_BINARY) + " " + arguments);
}

// Plays tools/examples/tour.jsonl (four channel types, a restart) into the
// store `open` returns.
void play_tour(engine::StoreOpener open) {
  auto runner = engine::ScriptRunner::start(std::move(open));
  REQUIRE_MESSAGE(runner.has_value(), testing::error_message(runner));
  std::ifstream script(PARLEY_SOURCE_DIR "/tools/examples/tour.jsonl");
  REQUIRE(script);
  std::string line;
  while (std::getline(script, line)) (void)(*runner)->run_line(line);
}

void play_tour(const fs::path& dir) {
  play_tour([dir]() -> engine::Result<std::shared_ptr<log::LogStore>> {
    auto opened = log::open_rocksdb_log_store(dir);
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    return std::shared_ptr<log::LogStore>(std::move(opened->store));
  });
}

replay::AuditReport audit(const fs::path& dir,
                          std::vector<std::string> channels = {}) {
  auto opened = log::open_rocksdb_log_store(dir, {.create_if_missing = false});
  REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
  auto report = replay::audit_store(*opened->store, {.channels = channels});
  REQUIRE_MESSAGE(report.has_value(), testing::error_message(report));
  return *report;
}

std::string all_problems(const replay::AuditReport& report) {
  std::string text;
  for (const auto& problem : report.problems) {
    text += replay::describe(problem) + "\n";
  }
  return text;
}

// The store's RocksDB opened directly, with Parley's column families.
class RawStore {
 public:
  explicit RawStore(const fs::path& dir) {
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (std::string_view name :
         {std::string_view(rocksdb::kDefaultColumnFamilyName),
          layout::kLogFamily, layout::kChannelIndexFamily,
          layout::kIdempotencyFamily, layout::kMetaFamily}) {
      families.emplace_back(std::string(name), rocksdb::ColumnFamilyOptions());
    }
    rocksdb::DB* db = nullptr;
    rocksdb::Status status = rocksdb::DB::Open(rocksdb::Options(), dir.string(),
                                               families, &handles_, &db);
    REQUIRE_MESSAGE(status.ok(), status.ToString());
    db_.reset(db);
  }
  ~RawStore() {
    for (auto* handle : handles_) db_->DestroyColumnFamilyHandle(handle);
    (void)db_->Close();
  }
  rocksdb::DB& db() { return *db_; }
  rocksdb::ColumnFamilyHandle* log() { return handles_[1]; }
  rocksdb::ColumnFamilyHandle* channel_index() { return handles_[2]; }
  rocksdb::ColumnFamilyHandle* idempotency() { return handles_[3]; }

  // The key of `channel`'s index entry whose run holds `channel_sequence`,
  // and the last channel sequence of that run.
  std::pair<std::string, std::uint64_t> index_entry_holding(
      std::string_view channel, std::uint64_t channel_sequence) {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), channel_index()));
    it->SeekForPrev(layout::channel_key(channel, channel_sequence));
    REQUIRE(it->Valid());
    const std::string key = it->key().ToString();
    REQUIRE(key.starts_with(layout::channel_prefix(channel)));
    std::vector<std::uint64_t> run;
    REQUIRE(layout::decode_index_run(
        std::string_view(it->value().data(), it->value().size()), run));
    const std::uint64_t first =
        *layout::decode_be64(std::string_view(key).substr(key.size() - 8));
    REQUIRE(channel_sequence < first + run.size());
    return {key, first + run.size() - 1};
  }

  // The first channel-index key, and its channel id.
  std::pair<std::string, std::string> first_index_entry() {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), channel_index()));
    it->SeekToFirst();
    REQUIRE(it->Valid());
    std::string key = it->key().ToString();
    return {key, key.substr(1, static_cast<std::uint8_t>(key[0]))};
  }

 private:
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::unique_ptr<rocksdb::DB> db_;
};

TEST_CASE("a healthy store audits clean, with one state hash") {
  testing::ScratchDir dir;
  play_tour(dir.path());
  replay::AuditReport report = audit(dir.path());
  CHECK_MESSAGE(report.clean(), all_problems(report));
  CHECK(report.records > 40);
  CHECK(report.channels == 4);
  CHECK(report.state_hash != 0);
  CHECK(audit(dir.path()).state_hash == report.state_hash);
}

TEST_CASE("a byte flipped inside a record is named by its log sequence") {
  testing::ScratchDir dir;
  play_tour(dir.path());
  {
    RawStore raw(dir.path());
    std::string value;
    const std::string key = layout::encode_be64(5);
    REQUIRE(raw.db().Get(rocksdb::ReadOptions(), raw.log(), key, &value).ok());
    value[5] ^= 0x20;  // inside the file identifier "PRLY"
    REQUIRE(raw.db().Put(rocksdb::WriteOptions(), raw.log(), key, value).ok());
  }
  replay::AuditReport report = audit(dir.path());
  const std::string problems = all_problems(report);
  CHECK_FALSE(report.clean());
  CHECK_MESSAGE(problems.find("log sequence 5: record fails the FlatBuffers "
                              "Verifier") != std::string::npos,
                problems);
  Run run = parley("audit -o text --data " + dir.path().string());
  CHECK(run.exit_code == 65);
  CHECK(run.out.find("log sequence 5: record fails the FlatBuffers Verifier") !=
        std::string::npos);
}

TEST_CASE("a record damaged past the Verifier is named by its checksum") {
  testing::ScratchDir dir;
  play_tour(dir.path());
  {
    RawStore raw(dir.path());
    std::string value;
    const std::string key = layout::encode_be64(7);
    REQUIRE(raw.db().Get(rocksdb::ReadOptions(), raw.log(), key, &value).ok());
    value.back() ^= 0x01;  // the last byte of a string: still a FlatBuffer
    REQUIRE(raw.db().Put(rocksdb::WriteOptions(), raw.log(), key, value).ok());
  }
  replay::AuditReport report = audit(dir.path());
  const std::string problems = all_problems(report);
  CHECK_MESSAGE(problems.find("log sequence 7: checksum mismatch (stored 0x") !=
                    std::string::npos,
                problems);
  Run run = parley("audit -o text --data " + dir.path().string());
  CHECK(run.exit_code == 65);
  CHECK_MESSAGE(
      run.out.find("log sequence 7: checksum mismatch") != std::string::npos,
      run.out);
}

TEST_CASE("a deleted channel-index entry is named with channel and sequence") {
  testing::ScratchDir dir;
  play_tour(dir.path());
  std::string channel;
  std::string missing;  // the channel sequences the deleted entry held
  {
    RawStore raw(dir.path());
    channel = raw.first_index_entry().second;
    // Delete the entry of the channel's second envelope: its run starts
    // there, after the run of the channel's opening record.
    auto [second, last] = raw.index_entry_holding(channel, 2);
    REQUIRE(second == layout::channel_key(channel, 2));
    missing = last == 2 ? "2" : "2.." + std::to_string(last);
    REQUIRE(raw.db()
                .Delete(rocksdb::WriteOptions(), raw.channel_index(), second)
                .ok());
  }
  replay::AuditReport report = audit(dir.path());
  const std::string problems = all_problems(report);
  CHECK_MESSAGE(problems.find("channel " + channel) != std::string::npos,
                problems);
  CHECK_MESSAGE(problems.find("sequence 2") != std::string::npos, problems);
  CHECK_MESSAGE(
      problems.find("missing from the channel index") != std::string::npos,
      problems);
  CHECK_MESSAGE(problems.find("channel index entry for channel sequence " +
                              missing + " missing") != std::string::npos,
                problems);
  Run run = parley("audit -o text --data " + dir.path().string());
  CHECK(run.exit_code == 65);
  CHECK(run.out.find("channel " + channel) != std::string::npos);
  CHECK(run.out.find("missing from the channel index") != std::string::npos);
}

TEST_CASE("overlapping channel-index runs are named") {
  testing::ScratchDir dir;
  play_tour(dir.path());
  std::string channel;
  std::uint64_t last = 0;  // the last channel sequence of a run of two or more
  {
    RawStore raw(dir.path());
    channel = raw.first_index_entry().second;
    auto [key, run_last] = raw.index_entry_holding(channel, 2);
    REQUIRE(run_last > 2);  // the tour wrote the channel's envelopes in runs
    last = run_last;
    std::vector<std::uint64_t> run;
    std::string value;
    REQUIRE(raw.db()
                .Get(rocksdb::ReadOptions(), raw.channel_index(), key, &value)
                .ok());
    REQUIRE(layout::decode_index_run(value, run));
    // A second entry for the run's last channel sequence.
    REQUIRE(raw.db()
                .Put(rocksdb::WriteOptions(), raw.channel_index(),
                     layout::channel_key(channel, last),
                     layout::encode_be64(run.back()))
                .ok());
  }
  const std::string problems = all_problems(audit(dir.path()));
  CHECK_MESSAGE(
      problems.find("channel index lists channel sequence " +
                    std::to_string(last) + " twice") != std::string::npos,
      problems);
}

TEST_CASE(
    "a discussion whose silent participant a hide handler hid audits clean") {
  testing::TestHub hub;
  const std::string alice = hub.add_agent("alice");
  const std::string bob = hub.add_agent("bob");
  const std::string carol = hub.add_agent("carol");
  auto opened = hub.open(alice, "discussion", {bob, carol});
  REQUIRE(opened.has_value());
  REQUIRE(hub.say(opened->channel_id, alice, "opening").has_value());
  // The discussion's turn_within of 600 s hides bob; the hide is folded
  // from an ExpectationFired record, which the channel index does not hold.
  hub.clock().advance(std::chrono::seconds(600));
  auto fired = hub.hub().tick_expectations();
  REQUIRE(fired.has_value());
  REQUIRE(hub.state(opened->channel_id)["hidden_participants"] ==
          nlohmann::json::array({bob}));
  REQUIRE(hub.hub().close().has_value());
  replay::AuditReport report = audit(hub.data() / "store");
  CHECK_MESSAGE(report.clean(), all_problems(report));
}

TEST_CASE("a store with idempotent posts and their retries audits clean") {
  testing::TestHub hub;
  const std::string alice = hub.add_agent("alice");
  const std::string bob = hub.add_agent("bob");
  auto opened = hub.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  auto post = [&](std::string_view key) {
    return hub.ops().call("post_envelope",
                          {{"envelope",
                            {{"channel_id", opened->channel_id},
                             {"sender_id", alice},
                             {"audience", nullptr},
                             {"event_type", "ag2.msg.text"},
                             {"event_data", {{"text", "once"}}},
                             {"idempotency_key", key}}}});
  };
  auto first = post("k1");
  REQUIRE_MESSAGE(first.has_value(), testing::error_message(first));
  auto retry = post("k1");  // writes nothing
  REQUIRE(retry.has_value());
  CHECK(*retry == *first);
  REQUIRE(post("k2").has_value());
  REQUIRE(hub.hub().close().has_value());
  replay::AuditReport report = audit(hub.data() / "store");
  CHECK_MESSAGE(report.clean(), all_problems(report));
}

TEST_CASE(
    "an idempotency-index entry must point at an envelope with that key") {
  testing::ScratchDir dir;
  play_tour(dir.path());
  {
    RawStore raw(dir.path());
    rocksdb::ColumnFamilyHandle* idempotency = raw.idempotency();
    // Log sequence 1 registers alice: not an envelope.
    REQUIRE(raw.db()
                .Put(rocksdb::WriteOptions(), idempotency, "post:stray",
                     layout::encode_be64(1))
                .ok());
    REQUIRE(raw.db()
                .Put(rocksdb::WriteOptions(), idempotency, "post:gone",
                     layout::encode_be64(100000))
                .ok());
  }
  const std::string problems = all_problems(audit(dir.path()));
  CHECK_MESSAGE(problems.find("log sequence 1: idempotency key 'post:stray' "
                              "points at a record that is not an envelope") !=
                    std::string::npos,
                problems);
  CHECK_MESSAGE(
      problems.find("idempotency key 'post:gone' points at log "
                    "sequence 100000, which is missing") != std::string::npos,
      problems);
}

TEST_CASE("audit CHANNEL reports only that channel's problems") {
  testing::ScratchDir dir;
  play_tour(dir.path());
  std::string damaged;
  std::string other;
  {
    RawStore raw(dir.path());
    damaged = raw.first_index_entry().second;
    REQUIRE(raw.db()
                .Delete(rocksdb::WriteOptions(), raw.channel_index(),
                        layout::channel_key(damaged, 1))
                .ok());
    std::unique_ptr<rocksdb::Iterator> it(
        raw.db().NewIterator(rocksdb::ReadOptions(), raw.channel_index()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string key = it->key().ToString();
      std::string id = key.substr(1, static_cast<std::uint8_t>(key[0]));
      if (id != damaged) other = id;
    }
  }
  REQUIRE_FALSE(other.empty());
  CHECK_FALSE(audit(dir.path(), {damaged}).clean());
  CHECK(audit(dir.path(), {other}).clean());
  CHECK(parley("audit --data " + dir.path().string() + " " + other).exit_code ==
        0);
  CHECK(
      parley("audit --data " + dir.path().string() + " " + damaged).exit_code ==
      65);
  CHECK(parley("audit --data " + dir.path().string() + " nosuchchannel")
            .exit_code == 66);
}

TEST_CASE("parley audit on a healthy store exits 0 with a summary") {
  testing::ScratchDir dir;
  play_tour(dir.path());
  Run run = parley("audit -o text --data " + dir.path().string());
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("channels 4, problems 0, state hash ") !=
        std::string::npos);
  CHECK(parley("audit --data " + (dir.path() / "none").string()).exit_code ==
        66);
  CHECK(parley("audit").exit_code == 64);
}

TEST_CASE(
    "parley audit -o jsonl prints one object per problem, then the summary") {
  testing::ScratchDir dir;
  play_tour(dir.path());
  std::uint64_t first = 0;  // the first channel sequence deleted
  {
    RawStore raw(dir.path());
    const std::string channel = raw.first_index_entry().second;
    const std::string key = raw.index_entry_holding(channel, 3).first;
    first = *layout::decode_be64(std::string_view(key).substr(key.size() - 8));
    REQUIRE(raw.db()
                .Delete(rocksdb::WriteOptions(), raw.channel_index(), key)
                .ok());
  }
  Run run = parley("audit -o jsonl --data " + dir.path().string());
  CHECK(run.exit_code == 65);
  std::vector<nlohmann::json> lines;
  std::istringstream out(run.out);
  for (std::string line; std::getline(out, line);) {
    lines.push_back(nlohmann::json::parse(line));
  }
  REQUIRE(lines.size() >= 2);
  CHECK(lines.front()["sequence"] == first);
  CHECK(lines.front()["channel_id"].is_string());
  CHECK(lines.front()["problem"].is_string());
  CHECK(lines.back()["problems"] == lines.size() - 1);
  CHECK(lines.back()["state_hash"].get<std::string>().size() == 16);
}

TEST_CASE("parley audit reads a store a live writer holds") {
  testing::ScratchDir dir;
  play_tour(dir.path());
  auto held = log::open_rocksdb_log_store(dir.path());
  REQUIRE(held.has_value());
  Run run = parley("audit -o text --data " + dir.path().string());
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("problems 0") != std::string::npos);
}

TEST_CASE("parley audit --trail prints the audit records in order") {
  testing::ScratchDir dir;
  play_tour(dir.path());
  Run run = parley("audit --trail --data " + dir.path().string());
  CHECK(run.exit_code == 0);
  const std::size_t alice = run.out.find(
      "\"kind\": \"agent_registered\", "
      "\"name\": \"alice\"}\n");
  const std::size_t created = run.out.find("\"kind\": \"channel_created\"");
  const std::size_t closed = run.out.find(
      "\"kind\": \"channel_closed\", \"reason\": \"consulting_complete\"}");
  CHECK(run.out.starts_with("{\"agent_id\": "));
  CHECK(alice < run.out.find('\n') + 1);
  CHECK(alice < created);
  CHECK(created < closed);
  CHECK(closed != std::string::npos);
}

}  // namespace
}  // namespace parley
