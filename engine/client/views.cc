#include "engine/client/views.h"

#include <algorithm>

namespace parley::client {

namespace {

template <typename View>
ViewFactory builtin_factory(
    std::string_view name,
    std::function<engine::ViewPolicy(const ChannelMetadata&)> fallback) {
  return [name = std::string(name), fallback = std::move(fallback)](
             const ChannelMetadata& channel, std::string_view participant_id,
             const engine::ChannelAdapter& adapter)
             -> std::shared_ptr<const ViewPolicy> {
    engine::ViewPolicy policy =
        adapter.default_view_policy(channel, participant_id);
    if (policy.name() != name) policy = fallback(channel);
    return std::make_shared<const View>(policy);
  };
}

std::int64_t participants_window(const ChannelMetadata& channel) {
  return std::max<std::int64_t>(
      2 * static_cast<std::int64_t>(channel.participants.size()), 4);
}

}  // namespace

ViewContext ViewContext::for_adapter(const engine::ChannelAdapter& adapter,
                                     engine::NameResolver name_for) {
  return {.render =
              [&adapter](const engine::EnvelopeView& envelope) {
                return adapter.render_envelope(envelope);
              },
          .name_for = std::move(name_for)};
}

std::vector<ModelItem> BuiltinView::project(std::span<const Envelope> history,
                                            std::string_view participant_id,
                                            const ChannelMetadata&,
                                            const ViewContext& context) const {
  return engine::project(policy_, history, participant_id, context.render,
                         context.name_for);
}

FullTranscript::FullTranscript()
    : BuiltinView(engine::ViewPolicy::full_transcript()) {}

NamedTranscript::NamedTranscript()
    : BuiltinView(engine::ViewPolicy::named_transcript()) {}

WindowedSummary::WindowedSummary(engine::ViewPolicy policy)
    : BuiltinView(policy) {}

Result<std::shared_ptr<const WindowedSummary>> WindowedSummary::create(
    std::int64_t recent_n) {
  auto policy = engine::ViewPolicy::windowed_summary(recent_n);
  if (!policy) return client_error(code::kInvalid, policy.error().message);
  return std::make_shared<const WindowedSummary>(*policy);
}

NamedWindowedSummary::NamedWindowedSummary(engine::ViewPolicy policy)
    : BuiltinView(policy) {}

Result<std::shared_ptr<const NamedWindowedSummary>>
NamedWindowedSummary::create(std::int64_t recent_n) {
  auto policy = engine::ViewPolicy::named_windowed_summary(recent_n);
  if (!policy) return client_error(code::kInvalid, policy.error().message);
  return std::make_shared<const NamedWindowedSummary>(*policy);
}

ViewRegistry ViewRegistry::builtin() {
  ViewRegistry registry;
  registry.add("full_transcript", [](const ChannelMetadata&, std::string_view,
                                     const engine::ChannelAdapter&) {
    return std::make_shared<const FullTranscript>();
  });
  registry.add("named_transcript", [](const ChannelMetadata&, std::string_view,
                                      const engine::ChannelAdapter&) {
    return std::make_shared<const NamedTranscript>();
  });
  registry.add("windowed_summary",
               builtin_factory<WindowedSummary>("windowed_summary", [](auto&) {
                 return *engine::ViewPolicy::windowed_summary(10);
               }));
  registry.add(
      "named_windowed_summary",
      builtin_factory<NamedWindowedSummary>(
          "named_windowed_summary", [](const ChannelMetadata& channel) {
            return *engine::ViewPolicy::named_windowed_summary(
                participants_window(channel));
          }));
  return registry;
}

void ViewRegistry::add(std::string name, ViewFactory factory) {
  factories_.insert_or_assign(std::move(name), std::move(factory));
}

std::shared_ptr<const ViewPolicy> ViewRegistry::make(
    std::string_view name, const ChannelMetadata& channel,
    std::string_view participant_id,
    const engine::ChannelAdapter& adapter) const {
  const auto found = factories_.find(name);
  if (found == factories_.end()) return nullptr;
  return found->second(channel, participant_id, adapter);
}

std::vector<ModelMessage> to_model_messages(std::span<const ModelItem> items) {
  std::vector<ModelMessage> messages;
  messages.reserve(items.size());
  for (const ModelItem& item : items) {
    ModelMessage message;
    message.text = item.text;
    switch (item.kind) {
      case ModelItem::Kind::kUser:
        message.role = ModelMessage::Role::kUser;
        break;
      case ModelItem::Kind::kAssistant:
        message.role = ModelMessage::Role::kAssistant;
        break;
      case ModelItem::Kind::kSummary:
        message.role = ModelMessage::Role::kSummary;
        message.event_count = item.event_count;
        break;
    }
    messages.push_back(std::move(message));
  }
  return messages;
}

}  // namespace parley::client
