#include "engine/views/view_policy.h"

#include <string>

namespace parley::engine {

namespace {

Result<void> check_recent_n(std::int64_t recent_n) {
  if (recent_n < 1) {
    return invalid("recent_n must be >= 1, got " + std::to_string(recent_n));
  }
  return {};
}

}  // namespace

Result<ViewPolicy> ViewPolicy::windowed_summary(std::int64_t recent_n) {
  if (auto ok = check_recent_n(recent_n); !ok) {
    return std::unexpected(ok.error());
  }
  return ViewPolicy(ViewKind::kWindowedSummary, recent_n);
}

Result<ViewPolicy> ViewPolicy::named_windowed_summary(std::int64_t recent_n) {
  if (auto ok = check_recent_n(recent_n); !ok) {
    return std::unexpected(ok.error());
  }
  return ViewPolicy(ViewKind::kNamedWindowedSummary, recent_n);
}

std::string_view ViewPolicy::name() const {
  switch (kind_) {
    case ViewKind::kFullTranscript:
      return "full_transcript";
    case ViewKind::kNamedTranscript:
      return "named_transcript";
    case ViewKind::kWindowedSummary:
      return "windowed_summary";
    case ViewKind::kNamedWindowedSummary:
      return "named_windowed_summary";
  }
  return "full_transcript";
}

}  // namespace parley::engine
