// What the built-in expectations read of a channel's history, folded
// envelope by envelope with the rest of the channel so that an expectation
// sweep never reads the log: when content was last posted and, per agent,
// the last text it sent and the last text it was shown.
//
// "Content" is every envelope whose type is not ag2.channel.*, ag2.task.*
// or ag2.expectation.violated. A text is shown to an agent that did not
// send it when its audience is absent (everyone, including agents that
// join later) or names that agent. "Last" is in log order, not by
// created_at, which is kept as logged and parsed by whoever reads it.
//
// Memory: one entry per agent that sent a text or was named in a text's
// audience. Thread safety: none; the hub guards it with its channel.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace parley::engine {

// One logged envelope: its per-channel sequence and created_at.
struct ActivityMark {
  std::uint64_t sequence = 0;
  std::string created_at;
};

class ChannelActivity {
 public:
  // Folds the envelope at per-channel `sequence`; `audience` nullopt =
  // everyone.
  void fold(std::string_view sender_id, std::string_view event_type,
            std::string_view created_at,
            std::optional<std::span<const std::string_view>> audience,
            std::uint64_t sequence);

  // The last content envelope; nullopt before any.
  const std::optional<ActivityMark>& last_content() const {
    return last_content_;
  }
  // The last text `agent_id` sent; nullptr when none.
  const ActivityMark* last_text_sent(std::string_view agent_id) const;
  // The last text shown to `agent_id` that another agent sent; nullptr
  // when none.
  const ActivityMark* last_text_seen(std::string_view agent_id) const;

 private:
  struct AgentMarks {
    std::optional<ActivityMark> sent;
    std::optional<ActivityMark> seen_directed;  // audience named the agent
  };
  // A text shown to everyone, and who sent it.
  struct Broadcast {
    std::string sender_id;
    ActivityMark mark;
  };

  static void set(std::optional<ActivityMark>& slot,
                  std::string_view created_at, std::uint64_t sequence);
  AgentMarks& marks_of(std::string_view agent_id);

  std::optional<ActivityMark> last_content_;
  // The last broadcast text, and the last one whose sender differs from
  // its sender: together they give every agent the last broadcast it was
  // shown.
  std::optional<Broadcast> last_broadcast_;
  std::optional<Broadcast> last_broadcast_by_another_;
  std::map<std::string, AgentMarks, std::less<>> agents_;
};

}  // namespace parley::engine
