// Views in the client: what a participant's model sees of a channel (AG2's
// ViewPolicy protocol). A ViewPolicy turns the channel's log up to the
// current envelope into model history; the built-ins (FullTranscript,
// NamedTranscript, WindowedSummary, NamedWindowedSummary) are the engine's
// projection (engine/views/view.h), the one `parley view` prints, so both
// show a participant exactly the same history. Custom views implement the
// interface and are found by name through a ViewRegistry.
//
// Every built-in honours audience: an envelope addressed to others is not
// shown (engine::visible_to). Pure: no I/O; callable from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/adapters/channel_adapter.h"
#include "engine/base/envelope.h"
#include "engine/channels/channel.h"
#include "engine/client/error.h"
#include "engine/client/model.h"
#include "engine/views/view.h"

namespace parley::client {

using engine::ChannelMetadata;
using engine::Envelope;
// kUser (others'), kAssistant (own), kSummary (compaction placeholder).
using engine::ModelItem;

// What a view needs beside the log: the channel adapter's renderer (which
// envelopes models see, as what text) and agent names (for the named
// views; unknown ids resolve to themselves).
struct ViewContext {
  engine::EnvelopeRenderer render;
  engine::NameResolver name_for;

  // Renders with `adapter` (which must outlive the context).
  static ViewContext for_adapter(const engine::ChannelAdapter& adapter,
                                 engine::NameResolver name_for = {});
};

class ViewPolicy {
 public:
  virtual ~ViewPolicy() = default;
  // Unique among registered views (what manifests name).
  virtual std::string_view name() const = 0;
  // `history`: the channel's envelopes in log order, up to (excluding) the
  // current one.
  virtual std::vector<ModelItem> project(std::span<const Envelope> history,
                                         std::string_view participant_id,
                                         const ChannelMetadata& channel,
                                         const ViewContext& context) const = 0;
};

// A built-in view: the engine's projection under one engine::ViewPolicy.
class BuiltinView : public ViewPolicy {
 public:
  explicit BuiltinView(engine::ViewPolicy policy) : policy_(policy) {}
  std::string_view name() const override { return policy_.name(); }
  std::vector<ModelItem> project(std::span<const Envelope> history,
                                 std::string_view participant_id,
                                 const ChannelMetadata& channel,
                                 const ViewContext& context) const override;
  const engine::ViewPolicy& policy() const { return policy_; }

 private:
  engine::ViewPolicy policy_;
};

// Every visible envelope, in order; own -> assistant, others' -> user.
class FullTranscript final : public BuiltinView {
 public:
  FullTranscript();
};

// As FullTranscript, others' text as "[<name>]: <text>".
class NamedTranscript final : public BuiltinView {
 public:
  NamedTranscript();
};

// The last recent_n visible envelopes; when there are more, one leading
// summary item stands for the older k: "Earlier in this channel: <k>
// message<s> from <sorted unique sender ids>.".
class WindowedSummary final : public BuiltinView {
 public:
  // kInvalid "recent_n must be >= 1, got <n>" when recent_n < 1.
  static Result<std::shared_ptr<const WindowedSummary>> create(
      std::int64_t recent_n);
  explicit WindowedSummary(engine::ViewPolicy policy);
};

// As WindowedSummary with names: recent others' lines name-prefixed, the
// summary listing sender names.
class NamedWindowedSummary final : public BuiltinView {
 public:
  // kInvalid as WindowedSummary::create.
  static Result<std::shared_ptr<const NamedWindowedSummary>> create(
      std::int64_t recent_n);
  explicit NamedWindowedSummary(engine::ViewPolicy policy);
};

// The view for one participant of one channel, given the adapter that
// governs it.
using ViewFactory = std::function<std::shared_ptr<const ViewPolicy>(
    const ChannelMetadata& channel, std::string_view participant_id,
    const engine::ChannelAdapter& adapter)>;

// Views by name. Copyable; not thread-safe while being extended.
class ViewRegistry {
 public:
  // The four built-ins. Each takes its parameters from the adapter's
  // default_view_policy when that names the same view (conversation:
  // windowed_summary with recent_n 10; discussion and workflow:
  // named_windowed_summary with max(2 * participants, 4)), else those
  // same defaults.
  static ViewRegistry builtin();

  // Registering a name again replaces its factory.
  void add(std::string name, ViewFactory factory);
  // nullptr when `name` is not registered.
  std::shared_ptr<const ViewPolicy> make(
      std::string_view name, const ChannelMetadata& channel,
      std::string_view participant_id,
      const engine::ChannelAdapter& adapter) const;

 private:
  std::map<std::string, ViewFactory, std::less<>> factories_;
};

// Turns a view's items into model messages (summary, user, assistant).
std::vector<ModelMessage> to_model_messages(std::span<const ModelItem> items);

}  // namespace parley::client
