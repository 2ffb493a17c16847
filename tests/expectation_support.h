// Test helpers for expectations: a built-in adapter under another type name
// with its own expectations, and a handler that records what it was given.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/adapters/channel_adapter.h"
#include "engine/expectations/expectation.h"

namespace parley::testing {

// `base`'s protocol under manifest type `type` with `expectations`.
class ExpectingAdapter final : public engine::ChannelAdapter {
 public:
  ExpectingAdapter(std::shared_ptr<const engine::ChannelAdapter> base,
                   std::string type,
                   std::vector<engine::ExpectationSpec> expectations)
      : base_(std::move(base)), manifest_(base_->manifest()) {
    manifest_.type = std::move(type);
    manifest_.expectations = std::move(expectations);
  }

  const engine::ChannelManifest& manifest() const override { return manifest_; }
  engine::Result<std::unique_ptr<engine::AdapterState>> initial_state(
      const engine::ChannelMetadata& metadata) const override {
    return base_->initial_state(metadata);
  }
  void fold(const engine::EnvelopeView& envelope,
            engine::AdapterState& state) const override {
    base_->fold(envelope, state);
  }
  engine::Result<void> validate_create(
      const engine::ChannelMetadata& metadata) const override {
    return base_->validate_create(metadata);
  }
  engine::Result<void> validate_send(
      const engine::ChannelMetadata& metadata,
      const engine::EnvelopeView& envelope,
      const engine::AdapterState& before) const override {
    return base_->validate_send(metadata, envelope, before);
  }
  engine::AcceptResult on_accepted(
      const engine::ChannelMetadata& metadata,
      const engine::EnvelopeView& envelope,
      const engine::AdapterState& after) const override {
    return base_->on_accepted(metadata, envelope, after);
  }
  std::optional<engine::ExpectedTurn> expected_next(
      const engine::ChannelMetadata& metadata,
      const engine::AdapterState& state) const override {
    return base_->expected_next(metadata, state);
  }
  void hide(std::string_view participant_id,
            engine::AdapterState& state) const override {
    base_->hide(participant_id, state);
  }

 private:
  std::shared_ptr<const engine::ChannelAdapter> base_;
  engine::ChannelManifest manifest_;
};

// A handler named `name` that only records (expectation index, violator)
// of every firing it handles.
class RecordingHandler final : public engine::ExpectationHandler {
 public:
  explicit RecordingHandler(std::string name) : name_(std::move(name)) {}

  std::string_view name() const override { return name_; }
  void handle(const engine::FiredExpectation& fired,
              engine::HandlerEffects&) const override {
    std::lock_guard lock(mutex_);
    calls_.emplace_back(fired.index, std::string(fired.violator));
  }
  std::vector<std::pair<std::size_t, std::string>> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  std::string name_;
  mutable std::mutex mutex_;
  mutable std::vector<std::pair<std::size_t, std::string>> calls_;
};

}  // namespace parley::testing
