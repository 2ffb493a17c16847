#include "tools/cli_output.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/json/records_json.h"
#include "engine/registry/registry.h"

namespace parley::tools {

void add_output_option(CLI::App& command, std::string& format) {
  command
      .add_option("-o,--output", format,
                  "text (a table), jsonl (one JSON object per line) or json "
                  "(one array); default: text on a terminal, else jsonl")
      ->check(CLI::IsMember({"text", "jsonl", "json"}));
}

OutputFormat resolve_format(std::string_view given) {
  if (given == "text") return OutputFormat::kText;
  if (given == "jsonl") return OutputFormat::kJsonl;
  if (given == "json") return OutputFormat::kJson;
  return isatty(STDOUT_FILENO) ? OutputFormat::kText : OutputFormat::kJsonl;
}

namespace {

// Display width: code points, not bytes.
std::size_t width_of(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> widths(header_.size());
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], width_of(row[i]));
    }
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      text += row[i];
      if (i + 1 < row.size()) {
        text.append(widths[i] - width_of(row[i]) + 2, ' ');
      }
    }
    out << text << '\n';
  };
  line(header_);
  for (const auto& row : rows_) line(row);
}

void JsonWriter::write(const nlohmann::json& value) {
  if (format_ == OutputFormat::kJson) {
    items_.push_back(engine::dump_compact(value));
    return;
  }
  out_ << engine::dump_compact(value) << '\n' << std::flush;
}

void JsonWriter::finish() {
  if (format_ != OutputFormat::kJson) return;
  out_ << '[';
  for (std::size_t i = 0; i < items_.size(); ++i) {
    out_ << (i > 0 ? ",\n " : "") << items_[i];
  }
  out_ << "]\n" << std::flush;
  items_.clear();
}

std::string name_of(const engine::Registry& registry,
                    std::string_view agent_id) {
  return registry.name_for(agent_id);
}

std::string name_and_id(const engine::Registry& registry,
                        std::string_view agent_id) {
  const engine::AgentRecord* agent = registry.find(agent_id);
  if (!agent) return std::string(agent_id);
  return agent->passport.name + " (" + std::string(agent_id) + ")";
}

std::string one_line(std::string_view text, std::size_t width) {
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool starts_code_point = (c & 0xC0) != 0x80;
    if (starts_code_point && shown == width) {
      out += "…";
      return out;
    }
    if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
    if (starts_code_point) ++shown;
  }
  return out;
}

Progress::Progress(std::string_view label, std::uint64_t total)
    : label_(label), total_(total), active_(isatty(STDERR_FILENO) != 0) {}

void Progress::update(std::uint64_t done) {
  if (!active_ || total_ == 0) return;
  const int percent = static_cast<int>(done * 100 / total_);
  if (percent == shown_percent_) return;
  shown_percent_ = percent;
  constexpr int kWidth = 30;
  const int filled = percent * kWidth / 100;
  std::cerr << '\r' << label_ << " [" << std::string(filled, '#')
            << std::string(kWidth - filled, ' ') << "] " << percent << "% "
            << std::flush;
}

void Progress::finish() {
  if (!active_) return;
  if (shown_percent_ >= 0) std::cerr << "\r\033[K" << std::flush;
  active_ = false;
}

}  // namespace parley::tools
