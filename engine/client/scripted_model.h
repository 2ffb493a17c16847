// ScriptedModel: a Model that answers from a script instead of an LLM, for
// tests and examples (as AG2's test configs do): a list of replies given in
// order, one per call, or a function of the request. It records every
// request, so a test can check what the model was shown.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "engine/client/model.h"

namespace parley::client {

class ScriptedModel final : public Model {
 public:
  using Responder = std::function<ModelReply(const ModelRequest&)>;

  // Replies in order; a call after the last fails with kInvalid "the
  // scripted model has no reply left (<n> scripted)".
  explicit ScriptedModel(std::vector<ModelReply> replies);
  // Texts only: each reply a final answer.
  static std::vector<ModelReply> texts(std::vector<std::string> texts);
  // Every call answered by `responder` (on the caller's thread).
  explicit ScriptedModel(Responder responder);

  // Answers inline.
  void complete(ModelRequest request, Handler<ModelReply> done) override;

  // Every request so far, in call order.
  std::vector<ModelRequest> requests() const;

 private:
  mutable std::mutex mutex_;
  std::vector<ModelReply> replies_;
  std::size_t next_ = 0;
  Responder responder_;
  std::vector<ModelRequest> requests_;
};

// A reply that calls one tool: {tool_calls: [{id, name, arguments}]}.
ModelReply tool_call_reply(std::string name, std::string arguments_json,
                           std::string id = "call_1");

}  // namespace parley::client
