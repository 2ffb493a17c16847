// ChatCompletionsModel: a Model served by an OpenAI-compatible
// chat-completions API over HTTP (vLLM, llama.cpp's server, Ollama, a
// gateway in front of a hosted model): one POST <base_url>/chat/completions
// per model call, mapped as engine/client/chat_completions.h says.
//
// Failures fail the turn: a status other than 200 is kError "chat
// completion HTTP <status>: <the body's error message, or its first 200
// bytes>"; an unreadable body kInvalid; no answer in time kTimeout.
//
// Threading: complete() may be called from any thread; `done` runs on the
// executor given to create(). Calls are independent (one connection each).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>

#include "engine/client/chat_completions.h"
#include "engine/client/http_post.h"
#include "engine/client/model.h"

namespace parley::client {

class ChatCompletionsModel final : public Model {
  struct PrivateTag {};

 public:
  // kInvalid when options.base_url is not an http:// URL.
  static Result<std::shared_ptr<ChatCompletionsModel>> create(
      boost::asio::any_io_executor executor, ChatCompletionsOptions options);

  ChatCompletionsModel(PrivateTag, boost::asio::any_io_executor executor,
                       ChatCompletionsOptions options, HttpUrl endpoint,
                       std::shared_ptr<TlsTrust> tls);

  void complete(ModelRequest request, Handler<ModelReply> done) override;

 private:
  const boost::asio::any_io_executor executor_;
  const ChatCompletionsOptions options_;
  const HttpUrl endpoint_;               // base_url + /chat/completions
  const std::shared_ptr<TlsTrust> tls_;  // https:// only
};

}  // namespace parley::client
