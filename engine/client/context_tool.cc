// The `context` plugin tool (engine/client/network_tools.h).
#include <algorithm>

#include "engine/base/event_types.h"
#include "engine/base/python_repr.h"
#include "engine/client/agent_client.h"
#include "engine/client/envelopes.h"
#include "engine/client/network_tools.h"
#include "engine/client/tool_support.h"

namespace parley::client {

namespace {

using nlohmann::json;
using tools::error_result;

constexpr std::size_t kExcerptCharacters = 240;

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a')
                                : static_cast<char>(c);
  });
  return out;
}

// Python's text[:239] + "…" for a text over 240 characters (code points of
// UTF-8 text), else the text.
std::string excerpt(const std::string& text) {
  std::size_t characters = 0;
  std::size_t cut = text.size();
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (characters == kExcerptCharacters - 1) cut = i;
    ++characters;
  }
  if (characters <= kExcerptCharacters) return text;
  return text.substr(0, cut) + "…";
}

// The channel the action reads: `channel_id`, else the turn's.
std::string channel_of(const json& arguments,
                       const TurnDependencies& dependencies) {
  std::string id = tools::text(arguments, "channel_id").value_or("");
  if (id.empty() && dependencies.channel) id = dependencies.channel->channel_id;
  return id;
}

bool is_text(const Envelope& envelope) {
  return envelope.event_type == event_type::kText;
}

void search(const json& arguments, const TurnDependencies& dependencies,
            Handler<ToolResult> done) {
  const auto query = tools::text(arguments, "query");
  if (!query || query->empty()) {
    return done(error_result("search requires `query`"));
  }
  const std::string scope = tools::text(arguments, "scope").value_or("channel");
  if (scope == "knowledge") return done(tools::json_result(json::array()));
  if (scope != "channel") {
    return done(error_result("unknown scope " + engine::python_repr(scope) +
                             "; choose from channel, knowledge"));
  }
  const std::string channel_id = channel_of(arguments, dependencies);
  if (channel_id.empty()) {
    return done(
        error_result("search scope=channel requires an active channel"));
  }
  const auto limit = static_cast<std::size_t>(
      std::max<std::int64_t>(0, tools::integer(arguments, "limit", 10)));
  dependencies.agent_client->hub_client()->read_wal(
      channel_id, [needle = ascii_lower(*query), limit, channel_id,
                   me = dependencies.agent_client->agent_id(),
                   done = std::move(done)](Result<std::vector<Envelope>> wal) {
        if (!wal) {
          return done(error_result(
              "channel " + engine::python_repr(channel_id) + " not found"));
        }
        json results = json::array();
        for (const Envelope& envelope : *wal) {
          if (results.size() >= limit) break;
          if (!is_text(envelope) || !client::visible_to(envelope, me)) continue;
          const std::string text = text_of(envelope);
          if (ascii_lower(text).find(needle) == std::string::npos) continue;
          results.push_back({{"envelope_id", envelope.envelope_id},
                             {"sender_id", envelope.sender_id},
                             {"when", envelope.created_at},
                             {"excerpt", excerpt(text)}});
        }
        done(tools::json_result(results));
      });
}

void quote(const json& arguments, const TurnDependencies& dependencies,
           Handler<ToolResult> done) {
  const auto speaker = tools::text(arguments, "speaker");
  if (!speaker || speaker->empty()) {
    return done(error_result("quote requires `speaker`"));
  }
  const std::string channel_id = channel_of(arguments, dependencies);
  if (channel_id.empty()) {
    return done(
        error_result("quote requires an active channel or `channel_id`"));
  }
  const auto recent_n = static_cast<std::size_t>(
      std::max<std::int64_t>(0, tools::integer(arguments, "recent_n", 1)));
  auto hub = dependencies.agent_client->hub_client();
  hub->get_agent(*speaker, [hub, speaker = *speaker, channel_id, recent_n,
                            me = dependencies.agent_client->agent_id(),
                            done = std::move(done)](Result<Passport> passport) {
    if (!passport || !passport->agent_id) {
      return done(error_result("speaker " + engine::python_repr(speaker) +
                               " not found"));
    }
    hub->read_wal(channel_id, [speaker_id = *passport->agent_id, channel_id,
                               recent_n, me,
                               done](Result<std::vector<Envelope>> wal) {
      if (!wal) {
        return done(error_result("channel " + engine::python_repr(channel_id) +
                                 " not found"));
      }
      json picks = json::array();
      for (auto it = wal->rbegin(); it != wal->rend(); ++it) {
        if (picks.size() >= recent_n) break;
        if (!is_text(*it) || it->sender_id != speaker_id ||
            !client::visible_to(*it, me)) {
          continue;
        }
        picks.push_back({{"envelope_id", it->envelope_id},
                         {"when", it->created_at},
                         {"text", text_of(*it)}});
      }
      std::ranges::reverse(picks);
      done(tools::json_result(picks));
    });
  });
}

}  // namespace

Tool context_tool() {
  ToolSchema schema{
      .name = "context",
      .description =
          "Read past content. search: query, scope=channel|knowledge, "
          "limit, channel_id? -> excerpts of the messages containing query. "
          "quote: speaker, recent_n=1, channel_id? -> that speaker's last "
          "messages.",
      .parameters =
          R"j({"type":"object","properties":{)j"
          R"j("action":{"type":"string","enum":["search","quote"]},)j"
          R"j("query":{"type":["string","null"],"description":"search: text to look for (case-insensitive)"},)j"
          R"j("scope":{"type":"string","enum":["channel","knowledge"],"description":"search: default channel"},)j"
          R"j("speaker":{"type":["string","null"],"description":"quote: the speaker's name or agent_id"},)j"
          R"j("recent_n":{"type":"integer","description":"quote: how many (default 1)"},)j"
          R"j("limit":{"type":"integer","description":"search: at most this many (default 10)"},)j"
          R"j("channel_id":{"type":["string","null"],"description":"default: this channel"}},)j"
          R"j("required":["action"]})j"};
  auto run = [](std::string arguments_json,
                const TurnDependencies& dependencies,
                Handler<ToolResult> done) {
    tools::dispatch(arguments_json, dependencies, std::move(done),
                    {{"search", search}, {"quote", quote}});
  };
  return {std::move(schema), std::move(run)};
}

}  // namespace parley::client
