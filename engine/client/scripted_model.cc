#include "engine/client/scripted_model.h"

namespace parley::client {

ScriptedModel::ScriptedModel(std::vector<ModelReply> replies)
    : replies_(std::move(replies)) {}

ScriptedModel::ScriptedModel(Responder responder)
    : responder_(std::move(responder)) {}

std::vector<ModelReply> ScriptedModel::texts(std::vector<std::string> texts) {
  std::vector<ModelReply> replies;
  for (std::string& text : texts) replies.push_back({std::move(text), {}});
  return replies;
}

void ScriptedModel::complete(ModelRequest request, Handler<ModelReply> done) {
  Result<ModelReply> reply = client_error(code::kInvalid, "");
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(request);
    if (responder_) {
      reply = responder_(request);
    } else if (next_ < replies_.size()) {
      reply = replies_[next_++];
    } else {
      reply = client_error(code::kInvalid,
                           "the scripted model has no reply left (" +
                               std::to_string(replies_.size()) + " scripted)");
    }
  }
  done(std::move(reply));
}

std::vector<ModelRequest> ScriptedModel::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

ModelReply tool_call_reply(std::string name, std::string arguments_json,
                           std::string id) {
  return {.text = "",
          .tool_calls = {{.id = std::move(id),
                          .name = std::move(name),
                          .arguments_json = std::move(arguments_json)}}};
}

}  // namespace parley::client
