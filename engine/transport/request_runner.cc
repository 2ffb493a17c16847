#include "engine/transport/request_runner.h"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <mutex>

#include "engine/ops/caller.h"
#include "engine/ops/control_plane.h"

namespace parley::transport {

struct RequestRunner::Pools {
  Pools(const RequestRunnerOptions& options)
      : general(std::max<std::size_t>(1, options.threads)),
        create_channel(
            std::max<std::size_t>(1, options.create_channel_threads)) {}
  boost::asio::thread_pool general;
  boost::asio::thread_pool create_channel;
  std::once_flag joined;
};

RequestRunner::RequestRunner(engine::ControlPlane& control_plane,
                             RequestRunnerOptions options)
    : control_plane_(control_plane), pools_(std::make_unique<Pools>(options)) {}

RequestRunner::~RequestRunner() { join(); }

void RequestRunner::run(std::string op, nlohmann::json params,
                        const engine::Caller& caller, Completion done) {
  auto& pool =
      op == "create_channel" ? pools_->create_channel : pools_->general;
  boost::asio::post(pool, [this, op = std::move(op), params = std::move(params),
                           &caller, done = std::move(done)] {
    done(call_op(control_plane_, op, params, caller));
  });
}

void RequestRunner::post(std::function<void()> work) {
  boost::asio::post(pools_->general, std::move(work));
}

void RequestRunner::join() {
  std::call_once(pools_->joined, [this] {
    pools_->general.join();
    pools_->create_channel.join();
  });
}

engine::Result<nlohmann::json> call_op(engine::ControlPlane& control_plane,
                                       std::string_view op,
                                       const nlohmann::json& params,
                                       const engine::Caller& caller) {
  return control_plane.call(op, params, &caller);
}

}  // namespace parley::transport
