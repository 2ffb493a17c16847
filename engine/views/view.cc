#include "engine/views/view.h"

#include <set>
#include <utility>

namespace parley::engine {

namespace {

// An envelope the participant sees, with its rendered text.
struct Shown {
  const Envelope* envelope;
  std::string text;
};

std::string name_of(const NameResolver& name_for, std::string_view id) {
  return name_for ? name_for(id) : std::string(id);
}

ModelItem to_item(const Shown& shown, std::string_view participant_id,
                  bool named, const NameResolver& name_for) {
  if (shown.envelope->sender_id == participant_id) {
    return {.kind = ModelItem::Kind::kAssistant, .text = shown.text};
  }
  if (!named) return {.kind = ModelItem::Kind::kUser, .text = shown.text};
  return {.kind = ModelItem::Kind::kUser,
          .text = "[" + name_of(name_for, shown.envelope->sender_id) +
                  "]: " + shown.text};
}

}  // namespace

std::string summary_text(std::size_t count,
                         std::span<const std::string> speakers) {
  std::string text = "Earlier in this channel: " + std::to_string(count) +
                     (count == 1 ? " message from " : " messages from ");
  for (std::size_t i = 0; i < speakers.size(); ++i) {
    if (i > 0) text += ", ";
    text += speakers[i];
  }
  text += '.';
  return text;
}

std::vector<ModelItem> project(const ViewPolicy& policy,
                               std::span<const Envelope> log,
                               std::string_view participant_id,
                               const EnvelopeRenderer& render,
                               const NameResolver& name_for) {
  std::vector<Shown> shown;
  for (const Envelope& envelope : log) {
    if (!visible_to(envelope, participant_id)) continue;
    auto text = render(view_of(envelope));
    if (!text) continue;
    shown.push_back({&envelope, std::move(*text)});
  }

  const bool named = policy.named();
  std::size_t cutoff = 0;  // shown[0, cutoff) go into the summary
  if (const auto recent_n = policy.recent_n();
      recent_n && shown.size() > static_cast<std::size_t>(*recent_n)) {
    cutoff = shown.size() - static_cast<std::size_t>(*recent_n);
  }

  std::vector<ModelItem> items;
  items.reserve(shown.size() - cutoff + (cutoff > 0 ? 1 : 0));
  if (cutoff > 0) {
    // Python's sorted(set(...)): unique, in code-point (UTF-8 byte) order.
    std::set<std::string> speakers;
    for (std::size_t i = 0; i < cutoff; ++i) {
      const std::string& sender = shown[i].envelope->sender_id;
      speakers.insert(named ? name_of(name_for, sender) : sender);
    }
    const std::vector<std::string> sorted(speakers.begin(), speakers.end());
    items.push_back({.kind = ModelItem::Kind::kSummary,
                     .text = summary_text(cutoff, sorted),
                     .event_count = cutoff});
  }
  for (std::size_t i = cutoff; i < shown.size(); ++i) {
    items.push_back(to_item(shown[i], participant_id, named, name_for));
  }
  return items;
}

std::vector<ModelItem> project(const ViewPolicy& policy,
                               std::span<const Envelope> log,
                               std::string_view participant_id,
                               const ChannelAdapter& adapter,
                               const NameResolver& name_for) {
  return project(
      policy, log, participant_id,
      [&adapter](const EnvelopeView& envelope) {
        return adapter.render_envelope(envelope);
      },
      name_for);
}

}  // namespace parley::engine
