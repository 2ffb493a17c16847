// Which projection of a channel's log a participant's model sees:
// AG2's four built-in view policies, as a value.
//
// Header-light on purpose: channel_adapter.h includes it, so it must not
// include anything from engine/adapters/.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/base/error.h"

namespace parley::engine {

enum class ViewKind {
  kFullTranscript,        // "full_transcript"
  kNamedTranscript,       // "named_transcript"
  kWindowedSummary,       // "windowed_summary"
  kNamedWindowedSummary,  // "named_windowed_summary"
};

// Immutable; copyable. A windowed policy always has recent_n >= 1.
class ViewPolicy {
 public:
  static ViewPolicy full_transcript() {
    return ViewPolicy(ViewKind::kFullTranscript, std::nullopt);
  }
  static ViewPolicy named_transcript() {
    return ViewPolicy(ViewKind::kNamedTranscript, std::nullopt);
  }
  // Fails with kInvalid "recent_n must be >= 1, got <n>" when recent_n < 1
  // (AG2's ValueError).
  static Result<ViewPolicy> windowed_summary(std::int64_t recent_n);
  static Result<ViewPolicy> named_windowed_summary(std::int64_t recent_n);

  ViewKind kind() const { return kind_; }
  // AG2's policy name, as manifests spell it ("windowed_summary", ...).
  std::string_view name() const;
  // The window size of the windowed kinds; nullopt for the transcripts.
  std::optional<std::int64_t> recent_n() const { return recent_n_; }
  // Whether others' lines and the summary use sender names.
  bool named() const {
    return kind_ == ViewKind::kNamedTranscript ||
           kind_ == ViewKind::kNamedWindowedSummary;
  }

  bool operator==(const ViewPolicy&) const = default;

 private:
  ViewPolicy(ViewKind kind, std::optional<std::int64_t> recent_n)
      : kind_(kind), recent_n_(recent_n) {}

  ViewKind kind_;
  std::optional<std::int64_t> recent_n_;
};

}  // namespace parley::engine
