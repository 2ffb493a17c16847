// Output conventions of the read-only commands: stdout is data, stderr is
// diagnostics. `-o text` prints aligned tables for people, `-o jsonl` one
// JSON object per line, `-o json` one JSON array; without -o, text on a
// terminal and JSON lines otherwise. Names are shown beside ids wherever a
// person reads the output.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace parley::engine {
class Registry;
}

namespace parley::tools {

enum class OutputFormat { kText, kJsonl, kJson };

// Adds `-o,--output text|jsonl|json` to `command`, stored in `format`.
void add_output_option(CLI::App& command, std::string& format);

// `given` ("text", "jsonl", "json"), or by stdout when empty.
OutputFormat resolve_format(std::string_view given);

// Columns padded to their widest cell; every row has the header's arity.
class Table {
 public:
  explicit Table(std::vector<std::string> header)
      : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Writes JSON objects as lines (kJsonl) or as one array at finish()
// (kJson), to `out`, flushing each line; as engine::dump_compact writes
// them, so a damaged record's bad UTF-8 prints as U+FFFD.
class JsonWriter {
 public:
  JsonWriter(std::ostream& out, OutputFormat format)
      : out_(out), format_(format) {}
  void write(const nlohmann::json& value);
  void finish();

 private:
  std::ostream& out_;
  OutputFormat format_;
  std::vector<std::string> items_;  // kJson: serialised items
};

// "alice (18ea415e…)"-style: the registered name, then the id; just the id
// when it has no name.
std::string name_and_id(const engine::Registry& registry,
                        std::string_view agent_id);
// The registered name, or the id when there is none.
std::string name_of(const engine::Registry& registry,
                    std::string_view agent_id);

// `text` cut to `width` code points' worth of bytes, with "…" when cut;
// newlines shown as "\n".
std::string one_line(std::string_view text, std::size_t width);

// A progress bar on stderr while long work runs, only when stderr is a
// terminal; silent otherwise. Redraws at most every 1% of `total`.
class Progress {
 public:
  Progress(std::string_view label, std::uint64_t total);
  ~Progress() { finish(); }
  void update(std::uint64_t done);
  void finish();

 private:
  std::string label_;
  std::uint64_t total_;
  bool active_;
  int shown_percent_ = -1;
};

}  // namespace parley::tools
