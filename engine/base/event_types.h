// AG2's event-type strings and how the hub classifies them. Any other
// string may be posted too.
#pragma once

#include <string_view>

namespace parley::engine::event_type {

inline constexpr std::string_view kText = "ag2.msg.text";
inline constexpr std::string_view kPacket = "ag2.packet";
inline constexpr std::string_view kChannelInvite = "ag2.channel.invite";
inline constexpr std::string_view kChannelInviteAck = "ag2.channel.invite.ack";
inline constexpr std::string_view kChannelInviteReject =
    "ag2.channel.invite.reject";
inline constexpr std::string_view kChannelOpened = "ag2.channel.opened";
inline constexpr std::string_view kChannelClosed = "ag2.channel.closed";
inline constexpr std::string_view kChannelExpired = "ag2.channel.expired";
inline constexpr std::string_view kExpectationViolated =
    "ag2.expectation.violated";
inline constexpr std::string_view kContextSet = "ag2.context.set";
inline constexpr std::string_view kTaskCancelRequest =
    "ag2.task.cancel_request";
inline constexpr std::string_view kTaskCancelled = "ag2.task.cancelled";

// Hub classification, by prefix.
constexpr bool is_channel_protocol(std::string_view type) {
  return type.starts_with("ag2.channel.");
}
constexpr bool is_task_event(std::string_view type) {
  return type.starts_with("ag2.task.");
}
// Protocol events pass in any non-terminal state and skip inbox limits;
// everything else is substantive.
constexpr bool is_protocol(std::string_view type) {
  return is_channel_protocol(type) || is_task_event(type);
}

}  // namespace parley::engine::event_type
