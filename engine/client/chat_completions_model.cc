#include "engine/client/chat_completions_model.h"

namespace parley::client {

namespace {

// What a failed call's error shows of the body.
constexpr std::size_t kBodyShown = 200;

Error status_error(const HttpResponse& response) {
  const std::string detail = api_error_message(response.body)
                                 .value_or(response.body.substr(0, kBodyShown));
  return Error{std::string(code::kError), "chat completion HTTP " +
                                              std::to_string(response.status) +
                                              ": " + detail};
}

}  // namespace

Result<std::shared_ptr<ChatCompletionsModel>> ChatCompletionsModel::create(
    boost::asio::any_io_executor executor, ChatCompletionsOptions options) {
  auto endpoint = parse_http_url(options.base_url);
  if (!endpoint) return std::unexpected(endpoint.error());
  if (endpoint->target.ends_with('/')) endpoint->target.pop_back();
  endpoint->target += "/chat/completions";
  std::shared_ptr<TlsTrust> tls;
  if (endpoint->tls) {
    auto trust = make_tls_trust(options.tls_ca_file);
    if (!trust) return std::unexpected(trust.error());
    tls = std::move(*trust);
  }
  return std::make_shared<ChatCompletionsModel>(
      PrivateTag{}, std::move(executor), std::move(options),
      std::move(*endpoint), std::move(tls));
}

ChatCompletionsModel::ChatCompletionsModel(
    PrivateTag, boost::asio::any_io_executor executor,
    ChatCompletionsOptions options, HttpUrl endpoint,
    std::shared_ptr<TlsTrust> tls)
    : executor_(std::move(executor)),
      options_(std::move(options)),
      endpoint_(std::move(endpoint)),
      tls_(std::move(tls)) {}

void ChatCompletionsModel::complete(ModelRequest request,
                                    Handler<ModelReply> done) {
  HttpPost post{.url = endpoint_,
                .body = chat_completions_body(request, options_),
                .timeout = options_.timeout,
                .tls = tls_};
  if (!options_.api_key.empty()) {
    post.headers.emplace_back("Authorization", "Bearer " + options_.api_key);
  }
  http_post(executor_, std::move(post),
            [done = std::move(done)](Result<HttpResponse> response) {
              if (!response) return done(std::unexpected(response.error()));
              if (response->status != 200) {
                return done(std::unexpected(status_error(*response)));
              }
              done(parse_chat_completion(response->body));
            });
}

}  // namespace parley::client
