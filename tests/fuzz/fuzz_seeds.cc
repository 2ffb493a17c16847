// fuzz_seeds OUT_DIR: writes the seed corpus of every fuzz target into
// OUT_DIR/<target>/, from the repository's goldens (PARLEY_SOURCE_DIR):
// the `parley exec` examples (tools/examples/*.jsonl) and golden scripts
// (tests/golden/scripts/*.jsonl), the golden AG2 store
// (tests/golden/ag2-store-smoke) and AG2's recorded wire session
// (tests/golden/ag2-wire-trace.jsonl).
//
//   records     the scripts' logs: single records of every kind, and
//               channel windows (a ChannelCreated and the records after it)
//   ops         the scripts' control-plane lines, some as wire requests
//   exec        the scripts cut into short scripts (their registers, then
//               a window of lines)
//   ag2_import  every file of the golden store and of the scripts' logs
//               exported to AG2's layout, after its kind byte
//   skill       SKILL.md texts: registered ones, rendered fallbacks, and
//               the parser's quirks
//   frames      every frame the clients sent in the wire session
//   ws_frames   those frames as a client writes them on the socket (masked;
//               whole, fragmented, between pings and before a close), read
//               in reads of 1, 7 and 256 bytes
//   index_runs  channel-index values: each channel of the scripts' logs as
//               one run, and runs of one
// Exit 0, or 1 naming what failed.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/json/python_json.h"
#include "engine/registry/skill.h"
#include "log/memory_log_store.h"
#include "log/rocksdb_layout.h"
#include "replay/ag2_export.h"
#include "replay/record_json.h"
#include "tests/fuzz/ag2_skeleton.h"
#include "tests/fuzz/keep_open_store.h"
#include "tests/fuzz/record_stream.h"
#include "tests/ws_client_frame.h"
#include "tools/script_runner.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace parley;

const fs::path kSource = PARLEY_SOURCE_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Writes each distinct seed once, as OUT/<target>/<name>.
class Corpus {
 public:
  explicit Corpus(fs::path root) : root_(std::move(root)) {}

  void add(const std::string& target, const std::string& name,
           std::string_view bytes) {
    if (!seen_[target].insert(std::string(bytes)).second) return;
    const fs::path path = root_ / target / name;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path.string());
    ++count_[target];
  }

  const std::map<std::string, std::size_t>& counts() const { return count_; }

 private:
  fs::path root_;
  std::map<std::string, std::set<std::string>> seen_;
  std::map<std::string, std::size_t> count_;
};

bool is_script_op(std::string_view op) {
  return op == "invitee" || op == "clock.set" || op == "clock.advance" ||
         op == "sweep" || op == "restart" || op == "state";
}

// Plays `lines` through the script runner on a memory store; returns it.
std::shared_ptr<log::LogStore> play(const std::vector<std::string>& lines) {
  std::shared_ptr<log::LogStore> store = log::make_memory_log_store();
  auto runner = engine::ScriptRunner::start(
      [&]() -> engine::Result<std::shared_ptr<log::LogStore>> {
        return fuzz::keep_open(store);
      });
  if (!runner) throw std::runtime_error(runner.error().message);
  for (const std::string& line : lines) (void)(*runner)->run_line(line);
  return store;
}

void record_seeds(Corpus& corpus, const std::string& script,
                  const log::LogStore& store) {
  std::map<std::string, int> per_kind;
  std::vector<std::pair<std::uint64_t, std::string>> records;
  (void)store.read(1, log::kLastSequence,
                   [&](std::uint64_t sequence, std::string_view record) {
                     records.emplace_back(sequence, std::string(record));
                     return true;
                   });
  int windows = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const std::string kind(replay::record_kind(records[i].second));
    if (per_kind[kind]++ < 3) {
      std::string stream;
      fuzz::append_record(stream, records[i].second);
      corpus.add("records",
                 script + "-" + kind + "-" + std::to_string(per_kind[kind]),
                 stream);
    }
    if (kind == "ChannelCreated" && windows < 8) {
      std::string stream;
      for (std::size_t j = i; j < records.size() && j < i + 8; ++j) {
        fuzz::append_record(stream, records[j].second);
      }
      corpus.add("records", script + "-window-" + std::to_string(++windows),
                 stream);
    }
  }
}

void index_run_seeds(Corpus& corpus, const std::string& script,
                     const log::LogStore& store) {
  std::map<std::string, std::pair<std::uint64_t, std::string>> runs;
  (void)store.scan_channel_index(
      [&](std::string_view channel, std::uint64_t, std::uint64_t log_sequence) {
        auto& [previous, run] = runs[std::string(channel)];
        log::rocksdb_layout::append_to_index_run(run, previous, log_sequence);
        previous = log_sequence;
        return true;
      });
  int n = 0;
  for (const auto& [channel, run] : runs) {
    const std::string name = script + "-" + std::to_string(++n);
    corpus.add("index_runs", name, run.second);
    corpus.add("index_runs", name + "-first", run.second.substr(0, 8));
  }
}

void op_seeds(Corpus& corpus, const std::string& script,
              const std::vector<std::string>& lines) {
  int n = 0;
  for (const std::string& line : lines) {
    json request = json::parse(line, nullptr, false);
    if (!request.is_object() || !request.contains("op") ||
        is_script_op(request["op"].get<std::string>())) {
      continue;
    }
    request.erase("as");
    corpus.add("ops", script + "-" + std::to_string(++n),
               engine::dump_python(request));
    // The same request from a connection holding the agent it names.
    if (n % 3 == 0) {
      const json& params = request.value("params", json::object());
      for (const char* key :
           {"sender_id", "creator_id", "agent_id", "owner_id"}) {
        json found;
        if (params.contains(key)) found = params[key];
        if (params.contains("envelope") && params["envelope"].contains(key)) {
          found = params["envelope"][key];
        }
        if (found.is_string()) {
          request["caller"] = json::array({found});
          corpus.add("ops", script + "-wire-" + std::to_string(n),
                     engine::dump_python(request));
          break;
        }
      }
    }
  }
}

void exec_seeds(Corpus& corpus, const std::string& script,
                const std::vector<std::string>& lines) {
  std::vector<std::string> registers;
  std::vector<std::string> rest;
  for (const std::string& line : lines) {
    if (line.empty() || line.starts_with('#')) continue;
    (line.find(R"("op": "register")") != std::string::npos ? registers : rest)
        .push_back(line);
  }
  constexpr std::size_t kWindow = 10;
  int n = 0;
  for (std::size_t at = 0; at < rest.size() && n < 12; at += kWindow) {
    std::string text;
    for (const std::string& line : registers) text += line + "\n";
    for (std::size_t i = at; i < std::min(rest.size(), at + kWindow); ++i) {
      text += rest[i] + "\n";
    }
    corpus.add("exec", script + "-" + std::to_string(++n), text);
  }
}

// Every file of an AG2 layout whose kind fuzz_ag2_import knows.
void ag2_seeds(Corpus& corpus, const std::string& name, const fs::path& root) {
  if (!fs::exists(root)) return;
  std::map<std::size_t, int> per_kind;
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::ranges::sort(files);
  for (const fs::path& file : files) {
    const std::string relative = fs::relative(file, root).generic_string();
    for (std::size_t kind = 0; kind < fuzz::kAg2FileKinds.size(); ++kind) {
      const fs::path pattern(fuzz::kAg2FileKinds[kind].path);
      const std::string top = pattern.begin()->string();
      if (!relative.starts_with(top + "/") ||
          file.filename() != pattern.filename() || per_kind[kind]++ >= 6) {
        continue;
      }
      corpus.add("ag2_import",
                 name + "-" + std::string(fuzz::kAg2FileKinds[kind].name) +
                     "-" + std::to_string(per_kind[kind]),
                 std::string(1, static_cast<char>(kind)) + read_file(file));
    }
  }
}

void skill_seeds(Corpus& corpus) {
  const std::string_view quirks[] = {
      "---\nname: writer\ndescription: writes things\n---\n# Body\ntext\n",
      "---\r\nname: crlf\r\ndescription: windows\r\n---\r\nbody\r\n",
      "---\n---\nempty front matter\n",
      "---\nname: a\n----\nfour dashes\n",
      "---\nname: never closed\n",
      "---\n# a comment\nno colon here\nkey: value: more\n key2 :  v2 \n---\n",
      "---\nname: dup\nname: again\n---\n",
      "---\n\xc2\xa0name\xe3\x80\x80: \xe2\x80\x83spaced\xc2\x85more: x\n---\n",
      "plain body, no front matter\n",
      "",
  };
  int n = 0;
  for (std::string_view text : quirks) {
    corpus.add("skill", "quirk-" + std::to_string(++n), text);
  }
  engine::Passport passport;
  passport.name = "fallback";
  engine::Resume resume;
  resume.summary = "an agent";
  resume.claimed_capabilities = {"math", "law"};
  resume.domains = {"finance"};
  corpus.add("skill", "fallback",
             engine::render_fallback_skill(passport, resume));
}

void frame_seeds(Corpus& corpus) {
  using parley::testing::client_frame;
  using parley::transport::ws::Opcode;
  int n = 0;
  std::string whole;
  std::string fragmented;
  for (const std::string& line :
       lines_of(read_file(kSource / "tests/golden/ag2-wire-trace.jsonl"))) {
    const json entry = json::parse(line);
    if (entry["dir"] != "c->h") continue;
    const std::string frame = engine::dump_python(entry["frame"]);
    corpus.add("frames", "wire-" + std::to_string(++n), frame);
    whole += client_frame(Opcode::kText, frame);
    const std::size_t half = frame.size() / 2;
    fragmented += client_frame(Opcode::kText, frame.substr(0, half), false) +
                  client_frame(Opcode::kPing, "p") +
                  client_frame(Opcode::kContinuation, frame.substr(half));
  }
  const std::string close =
      client_frame(Opcode::kClose, std::string("\x03\xe8", 2) + "bye");
  for (const int read_size : {1, 7, 256}) {
    const std::string prefix(1, static_cast<char>(read_size - 1));
    const std::string tag = "-reads-of-" + std::to_string(read_size);
    corpus.add("ws_frames", "wire" + tag, prefix + whole + close);
    corpus.add("ws_frames", "wire-fragmented" + tag,
               prefix + fragmented + close);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_seeds OUT_DIR\n";
    return 64;
  }
  try {
    const fs::path out = argv[1];
    fs::remove_all(out);
    Corpus corpus(out);
    std::vector<fs::path> scripts = {kSource / "tools/examples/tour.jsonl",
                                     kSource / "tools/examples/tasks.jsonl"};
    for (const auto& entry :
         fs::directory_iterator(kSource / "tests/golden/scripts")) {
      const std::string name = entry.path().filename().string();
      if (!name.ends_with(".ag2.jsonl")) scripts.push_back(entry.path());
    }
    std::ranges::sort(scripts);
    const fs::path exported = out / ".export";
    for (const fs::path& path : scripts) {
      const std::string name = path.stem().string();
      const std::vector<std::string> lines = lines_of(read_file(path));
      auto store = play(lines);
      record_seeds(corpus, name, *store);
      index_run_seeds(corpus, name, *store);
      op_seeds(corpus, name, lines);
      exec_seeds(corpus, name, lines);
      for (const std::string& line : lines) {
        const json request = json::parse(line, nullptr, false);
        if (request.is_object() && request.contains("params") &&
            request["params"].contains("skill_md") &&
            request["params"]["skill_md"].is_string()) {
          corpus.add("skill", name + "-registered",
                     request["params"]["skill_md"].get<std::string>());
        }
      }
      fs::remove_all(exported);
      if (replay::export_ag2(*store, exported)) {
        ag2_seeds(corpus, name, exported);
      }
    }
    fs::remove_all(exported);
    ag2_seeds(corpus, "smoke", kSource / "tests/golden/ag2-store-smoke");
    skill_seeds(corpus);
    frame_seeds(corpus);
    for (const auto& [target, count] : corpus.counts()) {
      std::cout << target << ": " << count << " seeds\n";
    }
  } catch (const std::exception& error) {
    std::cerr << "fuzz_seeds: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
