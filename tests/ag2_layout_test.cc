// `parley export-ag2` / `parley import-ag2`: AG2's on-disk layout
// (replay/ag2_layout.h) into a store and back. Golden data:
// tests/golden/ag2-store-smoke (written by AG2's Python hub) and
// ag2-store-smoke.folded.json (what AG2's hub folds from it).
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/base/idempotency.h"
#include "engine/json/records_json.h"
#include "engine/records/log_records.h"
#include "log/rocksdb_log_store.h"
#include "replay/ag2_export.h"
#include "replay/ag2_import.h"
#include "replay/folded_store.h"
#include "replay/state_hash.h"
#include "replay/store_audit.h"
#include "tests/test_support.h"
#include "tools/script_runner.h"

namespace parley {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kSmoke = PARLEY_GOLDEN_DIR "/ag2-store-smoke";
const fs::path kSmokeFolded = PARLEY_GOLDEN_DIR "/ag2-store-smoke.folded.json";

using Run = testing::CommandRun;

Run parley(const std::string& arguments) {
  return testing::run_command(std::string(PARLEY_BINARY) + " " + arguments +
                              " 2>&1");
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<log::LogStore> open_store(const fs::path& dir) {
  auto opened = log::open_rocksdb_log_store(dir);
  REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
  return std::move(opened->store);
}

replay::Ag2ImportReport import_into(const fs::path& ag2, log::LogStore& store) {
  auto imported = replay::import_ag2(ag2, store);
  REQUIRE_MESSAGE(imported.has_value(), testing::error_message(imported));
  return *imported;
}

std::unique_ptr<replay::FoldedStore> fold(const log::LogStore& store) {
  auto folded = replay::FoldedStore::fold(store);
  REQUIRE_MESSAGE(folded.has_value(), testing::error_message(folded));
  return std::move(*folded);
}

// Relative path -> bytes of every file under `root`.
std::map<std::string, std::string> files_under(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) {
      files[fs::relative(entry.path(), root).string()] =
          read_file(entry.path());
    }
  }
  return files;
}

// Every channel's envelopes as AG2 JSON, in channel order.
std::map<std::string, std::vector<json>> histories(const log::LogStore& store) {
  std::map<std::string, std::vector<json>> out;
  auto folded = fold(store);
  for (const engine::ChannelEntry* channel :
       folded->state().channels.in_order()) {
    auto& wal = out[channel->metadata.channel_id];
    auto read = store.read_channel(
        channel->metadata.channel_id, 1, log::kLastSequence,
        [&](std::uint64_t, std::uint64_t, std::string_view record) {
          wal.push_back(engine::to_json(*engine::decode_envelope(record)));
          return true;
        });
    REQUIRE(read.has_value());
  }
  return out;
}

TEST_CASE("import of AG2's smoke store folds to AG2's folded states") {
  testing::ScratchDir dir;
  auto store = open_store(dir.path());
  replay::Ag2ImportReport report = import_into(kSmoke, *store);
  CHECK(report.agents == 5);
  CHECK(report.channels == 5);
  CHECK(report.audit_records == 11);
  CHECK(report.warnings == std::vector<std::string>{});

  const json expected = json::parse(read_file(kSmokeFolded));
  auto folded = fold(*store);
  const engine::HubState& state = folded->state();
  auto wals = histories(*store);
  for (const auto& item : expected["agents"].items()) {
    // Not bindings: a lambda captures them, which clang 14 cannot.
    const auto& id = item.key();
    const auto& agent = item.value();
    const engine::AgentRecord* record = state.registry.find(id);
    REQUIRE_MESSAGE(record != nullptr, id);
    CHECK(record->passport.name == agent["name"].get<std::string>());
    CHECK((record->passport.kind ? json(*record->passport.kind) : json()) ==
          agent["kind"]);
  }
  CHECK(state.registry.size() == expected["agents"].size());
  for (const auto& item : expected["channels"].items()) {
    // Not bindings: a lambda captures them, which clang 14 cannot.
    const auto& id = item.key();
    const auto& channel = item.value();
    CAPTURE(id);
    const engine::ChannelEntry* entry = state.channels.find(id);
    REQUIRE(entry != nullptr);
    CHECK(engine::to_string(entry->metadata.state) == channel["state"]);
    CHECK(entry->metadata.manifest.type == channel["type"]);
    CHECK(entry->metadata.creator_id == channel["creator_id"]);
    json participants = json::array();
    for (const auto& participant : entry->metadata.participants) {
      participants.push_back(participant.agent_id);
    }
    CHECK(participants == channel["participants"]);
    CHECK(entry->last_sequence == channel["wal_len"].get<std::uint64_t>());
    REQUIRE(entry->state != nullptr);
    CHECK(json::parse(entry->state->to_json()) == channel["adapter_state"]);
    std::map<std::string, int> event_types;
    for (const json& envelope : wals[id]) {
      ++event_types[envelope.at("event_type").get<std::string>()];
    }
    CHECK(json(event_types) == channel["event_types"]);
  }
  CHECK(state.channels.in_order().size() == expected["channels"].size());
}

// The one file that legitimately differs: AG2 writes a channel's `knobs`
// in the order its creator gave them; Parley's log keeps JSON payloads as
// FlexBuffers, whose maps are sorted, so knobs come back with sorted keys
// (same JSON value, other key order).
const char kWorkflowMetadata[] =
    "channels/18ea415ef817873bb84d58af130cdfe6/metadata.json";

TEST_CASE(
    "export of the imported smoke store reproduces AG2's files byte for "
    "byte") {
  testing::ScratchDir dir;
  auto store = open_store(dir.path() / "store");
  import_into(kSmoke, *store);
  auto exported = replay::export_ag2(*store, dir.path() / "out");
  REQUIRE_MESSAGE(exported.has_value(), testing::error_message(exported));
  CHECK(exported->agents == 5);
  CHECK(exported->channels == 5);
  CHECK(exported->envelopes == 39);
  const auto original = files_under(kSmoke);
  const auto written = files_under(dir.path() / "out");
  std::vector<std::string> original_names, written_names;
  for (const auto& [name, bytes] : original) original_names.push_back(name);
  for (const auto& [name, bytes] : written) written_names.push_back(name);
  CHECK(written_names == original_names);
  for (const auto& item : original) {
    // Not bindings: a lambda captures them, which clang 14 cannot.
    const auto& name = item.first;
    const auto& bytes = item.second;
    CAPTURE(name);
    auto found = written.find(name);
    REQUIRE(found != written.end());
    if (name == kWorkflowMetadata) {
      CHECK(found->second != bytes);
      CHECK(json::parse(found->second) == json::parse(bytes));
    } else {
      CHECK(found->second == bytes);
    }
  }
}

// Plays tools/examples/tour.jsonl into a store at `dir`.
void play_tour(const fs::path& dir) {
  auto runner = engine::ScriptRunner::start(
      [dir]() -> engine::Result<std::shared_ptr<log::LogStore>> {
        return std::shared_ptr<log::LogStore>(open_store(dir));
      });
  REQUIRE_MESSAGE(runner.has_value(), testing::error_message(runner));
  std::ifstream script(PARLEY_SOURCE_DIR "/tools/examples/tour.jsonl");
  std::string line;
  while (std::getline(script, line)) (void)(*runner)->run_line(line);
}

TEST_CASE(
    "AG2 round trip: export, import into a fresh store, identical histories "
    "and state hashes") {
  testing::ScratchDir dir;
  play_tour(dir.path() / "a");
  auto a = open_store(dir.path() / "a");
  auto exported = replay::export_ag2(*a, dir.path() / "ag2");
  REQUIRE_MESSAGE(exported.has_value(), testing::error_message(exported));
  auto b = open_store(dir.path() / "b");
  replay::Ag2ImportReport report = import_into(dir.path() / "ag2", *b);
  CHECK(report.warnings == std::vector<std::string>{});
  CHECK(histories(*b) == histories(*a));
  CHECK(replay::hash_hex(replay::store_state_hash(fold(*b)->state())) ==
        replay::hash_hex(replay::store_state_hash(fold(*a)->state())));
  // And back out: the same files.
  auto again = replay::export_ag2(*b, dir.path() / "ag2-again");
  REQUIRE(again.has_value());
  CHECK(files_under(dir.path() / "ag2-again") ==
        files_under(dir.path() / "ag2"));
}

// A copy of the smoke store the test may damage.
fs::path copy_smoke(const fs::path& to) {
  fs::copy(kSmoke, to, fs::copy_options::recursive);
  return to;
}

const char kConversationWal[] =
    "channels/18ea415ef6ef293d5bec87eabe61ccca/wal.jsonl";

TEST_CASE("import of a layout with a torn last WAL line reports it") {
  testing::ScratchDir dir;
  const fs::path ag2 = copy_smoke(dir.path() / "ag2");
  {
    std::ofstream wal(ag2 / kConversationWal, std::ios::app);
    wal << R"({"audience": null, "causation_id": null, "channel_id": "18ea)";
  }
  auto store = open_store(dir.path() / "store");
  replay::Ag2ImportReport report = import_into(ag2, *store);
  REQUIRE(report.warnings.size() == 1);
  CHECK(report.warnings[0].find(std::string(kConversationWal) +
                                ":7: torn last line") != std::string::npos);
  CHECK(report.envelopes == 39);
  CHECK(histories(*store)["18ea415ef6ef293d5bec87eabe61ccca"].size() == 6);
  store.reset();

  Run run = parley("import-ag2 --data " + (dir.path() / "cli").string() + " " +
                   ag2.string());
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("wal.jsonl:7: torn last line") != std::string::npos);
}

TEST_CASE(
    "import indexes the first envelope of each idempotency key and keeps "
    "AG2's repeats") {
  testing::ScratchDir dir;
  const fs::path ag2 = copy_smoke(dir.path() / "ag2");
  // Lines 4 and 6 are texts from the same sender; AG2 stored both with the
  // same key, as it ignored keys.
  std::istringstream lines(read_file(ag2 / kConversationWal));
  std::string wal, line;
  std::vector<json> envelopes;
  for (int number = 1; std::getline(lines, line); ++number) {
    json envelope = json::parse(line);
    if (number == 4 || number == 6) envelope["idempotency_key"] = "k1";
    envelopes.push_back(envelope);
    wal += envelope.dump() + "\n";
  }
  REQUIRE(envelopes[3]["sender_id"] == envelopes[5]["sender_id"]);
  std::ofstream(ag2 / kConversationWal, std::ios::binary | std::ios::trunc)
      << wal;

  auto store = open_store(dir.path() / "store");
  import_into(ag2, *store);
  CHECK(histories(*store)["18ea415ef6ef293d5bec87eabe61ccca"].size() == 6);
  auto indexed = store->find_idempotency_key(engine::post_idempotency_key(
      envelopes[3]["channel_id"].get<std::string>(),
      envelopes[3]["sender_id"].get<std::string>(), "k1"));
  REQUIRE(indexed.has_value());
  REQUIRE(indexed->has_value());
  std::optional<engine::Envelope> original;
  auto read = store->read(**indexed, **indexed,
                          [&](std::uint64_t, std::string_view record) {
                            original = engine::decode_envelope(record);
                            return true;
                          });
  REQUIRE(read.has_value());
  REQUIRE(original.has_value());
  CHECK(original->envelope_id == envelopes[3]["envelope_id"]);
  auto audit = replay::audit_store(*store);
  REQUIRE(audit.has_value());
  CHECK(audit->clean());
}

TEST_CASE(
    "a malformed WAL line before the end is a data error, nothing "
    "written") {
  testing::ScratchDir dir;
  const fs::path ag2 = copy_smoke(dir.path() / "ag2");
  std::string wal = read_file(ag2 / kConversationWal);
  const std::size_t second = wal.find('\n') + 1;
  wal.insert(second, "{\"audience\": nul\n");
  std::ofstream(ag2 / kConversationWal, std::ios::binary | std::ios::trunc)
      << wal;
  auto store = open_store(dir.path() / "store");
  auto imported = replay::import_ag2(ag2, *store);
  REQUIRE_FALSE(imported.has_value());
  CHECK(imported.error().kind == replay::Ag2ErrorKind::kData);
  CHECK(imported.error().message.find("wal.jsonl:2: ") != std::string::npos);
  CHECK(store->last_sequence() == 0);
  store.reset();

  Run run = parley("import-ag2 --data " + (dir.path() / "store").string() +
                   " " + ag2.string());
  CHECK(run.exit_code == 65);
  CHECK(run.out.find("wal.jsonl:2: ") != std::string::npos);
  // A store the failed command created itself is removed again.
  Run fresh = parley("import-ag2 --data " + (dir.path() / "fresh").string() +
                     " " + ag2.string());
  CHECK(fresh.exit_code == 65);
  CHECK_FALSE(fs::exists(dir.path() / "fresh"));
}

// Rewrites line `number` (1-based) of the WAL `path` with `change`.
void rewrite_wal_line(const fs::path& path, int number,
                      const std::function<void(json&)>& change) {
  std::istringstream lines(read_file(path));
  std::string wal, line;
  for (int at = 1; std::getline(lines, line); ++at) {
    json envelope = json::parse(line);
    if (at == number) change(envelope);
    wal += envelope.dump() + "\n";
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc) << wal;
}

// Imports `ag2` into a fresh store, which must fail with a data error whose
// message contains `words`, writing nothing; so must the command line.
void import_refused(const fs::path& dir, const fs::path& ag2,
                    std::string_view words) {
  auto store = open_store(dir / "store");
  auto imported = replay::import_ag2(ag2, *store);
  REQUIRE_FALSE(imported.has_value());
  CHECK(imported.error().kind == replay::Ag2ErrorKind::kData);
  CHECK_MESSAGE(imported.error().message.find(words) != std::string::npos,
                imported.error().message);
  CHECK(store->last_sequence() == 0);
  store.reset();
  Run run = parley("import-ag2 --data " + (dir / "cli").string() + " " +
                   ag2.string());
  CHECK(run.exit_code == 65);
  CHECK_FALSE(fs::exists(dir / "cli"));
}

TEST_CASE(
    "a SKILL.md that is not valid UTF-8 is a data error, nothing "
    "written") {
  testing::ScratchDir dir;
  const fs::path ag2 = copy_smoke(dir.path() / "ag2");
  const fs::path agent = fs::directory_iterator(ag2 / "agents")->path();
  std::ofstream(agent / "SKILL.md", std::ios::binary)
      << "---\nname: x\n---\nbad \xff\xfe bytes\n";
  import_refused(dir.path(), ag2, "SKILL.md: SKILL.md is not valid UTF-8");
}

TEST_CASE(
    "a WAL line without an envelope_id is a data error, nothing "
    "written") {
  testing::ScratchDir dir;
  const fs::path ag2 = copy_smoke(dir.path() / "ag2");
  rewrite_wal_line(ag2 / kConversationWal, 4,
                   [](json& envelope) { envelope.erase("envelope_id"); });
  import_refused(dir.path(), ag2,
                 "wal.jsonl:4: the envelope has no envelope_id");
}

TEST_CASE("a WAL line nested deeper than Parley parses is a data error") {
  testing::ScratchDir dir;
  const fs::path ag2 = copy_smoke(dir.path() / "ag2");
  std::string wal = read_file(ag2 / kConversationWal);
  wal.insert(wal.find('\n') + 1,
             std::string(10000, '[') + std::string(10000, ']') + "\n");
  std::ofstream(ag2 / kConversationWal, std::ios::binary | std::ios::trunc)
      << wal;
  import_refused(dir.path(), ag2, "nests deeper than 64 levels");
}

TEST_CASE(
    "an inbox cursor that is not an envelope id is ignored with a "
    "warning") {
  testing::ScratchDir dir;
  const fs::path ag2 = copy_smoke(dir.path() / "ag2");
  fs::path cursors;
  for (const auto& agent : fs::directory_iterator(ag2 / "agents")) {
    if (fs::exists(agent.path() / "inbox.cursors.json")) {
      cursors = agent.path() / "inbox.cursors.json";
    }
  }
  REQUIRE_FALSE(cursors.empty());
  json value = json::parse(read_file(cursors));
  REQUIRE(value.is_object());
  value[value.begin().key()] = 42;
  std::ofstream(cursors, std::ios::binary | std::ios::trunc) << value.dump();
  auto store = open_store(dir.path() / "store");
  replay::Ag2ImportReport report = import_into(ag2, *store);
  REQUIRE(report.warnings.size() == 1);
  CHECK(report.warnings[0].find("is not an envelope id (42)") !=
        std::string::npos);
}

TEST_CASE("tasks and checkpoints go into the log and come back out") {
  testing::ScratchDir dir;
  const fs::path ag2 = copy_smoke(dir.path() / "ag2");
  const std::string task =
      R"({"task_id": "5f0c", "owner_id": "18ea415ef6bf60ef829f7f6b08b41809", )"
      R"("spec": {"title": "sum", "description": "", "payload": {"a": 1}, )"
      R"("capability": "math"}, "state": "completed", "created_at": )"
      R"("2026-11-22T03:47:57.594000+00:00", "started_at": )"
      R"("2026-11-22T03:47:57.594000+00:00", "completed_at": )"
      R"("2026-11-22T03:47:57.595000+00:00", "expires_at": null, )"
      R"("last_progress_at": null, "progress": {}, "result": 4, "error": "", )"
      R"("channel_id": "18ea415ef7333cceb9069e25763785be"})";
  const std::string checkpoint = R"({"step": 2, "total": 4})";
  fs::create_directories(ag2 / "tasks" / "5f0c");
  std::ofstream(ag2 / "tasks" / "5f0c" / "metadata.json") << task;
  std::ofstream(ag2 / "tasks" / "5f0c" / "checkpoint.json") << checkpoint;
  auto store = open_store(dir.path() / "store");
  replay::Ag2ImportReport report = import_into(ag2, *store);
  CHECK(report.task_records == 2);
  auto exported = replay::export_ag2(*store, dir.path() / "out");
  REQUIRE(exported.has_value());
  CHECK(exported->tasks == 1);
  CHECK(read_file(dir.path() / "out" / "tasks" / "5f0c" / "metadata.json") ==
        task);
  CHECK(read_file(dir.path() / "out" / "tasks" / "5f0c" / "checkpoint.json") ==
        checkpoint);
}

TEST_CASE("a task file that is not a TaskMetadata is a data error") {
  testing::ScratchDir dir;
  const fs::path ag2 = copy_smoke(dir.path() / "ag2");
  fs::create_directories(ag2 / "tasks" / "t1");
  std::ofstream(ag2 / "tasks" / "t1" / "metadata.json")
      << R"({"task_id": "t1", "owner_id": "x", "spec": {"title": "a"}, )"
         R"("state": "sleeping"})";
  auto store = open_store(dir.path() / "store");
  auto imported = replay::import_ag2(ag2, *store);
  REQUIRE_FALSE(imported.has_value());
  CHECK(imported.error().kind == replay::Ag2ErrorKind::kData);
  CHECK(imported.error().message.find("t1/metadata.json") != std::string::npos);
  CHECK(store->last_sequence() == 0);
}

// Found by fuzz_ag2_import: a checkpoint.json holding a JSON scalar was
// written into the store, then the import's own fold refused it
// ("corruption: log record 1 holds an unreadable task") with the records
// already there. Now the checkpoint is refused as it is read, and every
// import is folded in memory before anything is written.
TEST_CASE(
    "a checkpoint that is not a JSON object is a data error, nothing written") {
  testing::ScratchDir dir;
  const fs::path ag2 = copy_smoke(dir.path() / "ag2");
  fs::create_directories(ag2 / "tasks" / "t1");
  std::ofstream(ag2 / "tasks" / "t1" / "checkpoint.json") << "4";
  auto store = open_store(dir.path() / "store");
  auto imported = replay::import_ag2(ag2, *store);
  REQUIRE_FALSE(imported.has_value());
  CHECK(imported.error().kind == replay::Ag2ErrorKind::kData);
  CHECK(imported.error().message.find("t1/checkpoint.json: a checkpoint must "
                                      "be a JSON object") != std::string::npos);
  CHECK(store->last_sequence() == 0);
}

TEST_CASE("import refuses a store that already holds records") {
  testing::ScratchDir dir;
  auto store = open_store(dir.path());
  import_into(kSmoke, *store);
  const std::uint64_t last = store->last_sequence();
  auto again = replay::import_ag2(kSmoke, *store);
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().kind == replay::Ag2ErrorKind::kUsage);
  CHECK(again.error().message.find("already holds") != std::string::npos);
  CHECK(store->last_sequence() == last);
}

TEST_CASE(
    "AUDIT-06 audit JSON lines round trip: imported, read back in order with "
    "sorted keys, exported unchanged") {
  testing::ScratchDir dir;
  const fs::path ag2 = dir.path() / "ag2";
  fs::create_directories(ag2 / "agents");
  fs::create_directories(ag2 / "audit");
  const std::string lines =
      "{\"at\": \"2026-01-01T00:00:00\", \"kind\": \"test\", \"n\": 1}\n"
      "{\"at\": \"2026-01-01T00:00:01\", \"kind\": \"test\", \"n\": 2}\n";
  std::ofstream(ag2 / "audit" / "audit.jsonl") << lines;
  const std::string store = (dir.path() / "store").string();
  Run imported = parley("import-ag2 --data " + store + " " + ag2.string());
  REQUIRE(imported.exit_code == 0);
  Run trail = parley("audit --trail --data " + store);
  CHECK(trail.exit_code == 0);
  CHECK(trail.out == lines);
  REQUIRE(
      parley("export-ag2 --data " + store + " " + (dir.path() / "out").string())
          .exit_code == 0);
  CHECK(read_file(dir.path() / "out" / "audit" / "audit.jsonl") == lines);
}

TEST_CASE("parley export-ag2 and import-ag2 on the command line") {
  testing::ScratchDir dir;
  const std::string store = (dir.path() / "store").string();
  Run imported = parley("import-ag2 --data " + store + " " + kSmoke.string());
  CHECK(imported.exit_code == 0);
  CHECK(imported.out.find("imported 5 agents, 5 channels, 39 envelopes") !=
        std::string::npos);
  Run exported = parley("export-ag2 --data " + store + " " +
                        (dir.path() / "out").string());
  CHECK(exported.exit_code == 0);
  CHECK(read_file(dir.path() / "out" / "audit" / "audit.jsonl") ==
        read_file(kSmoke / "audit" / "audit.jsonl"));
  // A non-empty OUT_DIR is refused; a missing store or layout is 66.
  CHECK(
      parley("export-ag2 --data " + store + " " + (dir.path() / "out").string())
          .exit_code == 64);
  CHECK(parley("export-ag2 --data " + (dir.path() / "none").string() + " " +
               (dir.path() / "out2").string())
            .exit_code == 66);
  CHECK(parley("import-ag2 --data " + (dir.path() / "s2").string() + " " +
               dir.path().string())
            .exit_code == 66);
  CHECK(parley("import-ag2 --help").out.find("Example: parley import-ag2") !=
        std::string::npos);
}

}  // namespace
}  // namespace parley
