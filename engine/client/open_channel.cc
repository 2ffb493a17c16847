#include "engine/client/open_channel.h"

namespace parley::client {

namespace {

// An open in progress: the targets resolved so far.
// Weak: a call still pending when the executor stops must not keep the
// HubClient alive through its own handler.
struct Opening {
  std::weak_ptr<HubClient> hub;
  std::string creator_id;
  OpenRequest request;
  std::vector<std::string> ids;
  Handler<ChannelMetadata> done;
};

void continue_opening(std::shared_ptr<Opening> opening) {
  auto hub = opening->hub.lock();
  if (!hub)
    return opening->done(client_error(code::kClosed, "HubClient is gone"));
  if (opening->ids.size() < opening->request.targets.size()) {
    const std::string target = opening->request.targets[opening->ids.size()];
    hub->get_agent(target, [opening](Result<Passport> passport) {
      if (!passport) return opening->done(std::unexpected(passport.error()));
      opening->ids.push_back(passport->agent_id.value_or(""));
      continue_opening(opening);
    });
    return;
  }
  CreateChannelRequest create;
  create.creator_id = opening->creator_id;
  create.manifest_type = opening->request.type;
  create.participants = std::move(opening->ids);
  create.ttl = opening->request.ttl;
  create.knobs = opening->request.knobs_json;
  create.intent = opening->request.intent;
  create.labels = opening->request.labels_json;
  hub->create_channel(std::move(create), std::move(opening->done));
}

}  // namespace

void open_channel(std::shared_ptr<HubClient> hub, std::string creator_id,
                  OpenRequest request, Handler<ChannelMetadata> done) {
  continue_opening(std::make_shared<Opening>(Opening{std::move(hub),
                                                     std::move(creator_id),
                                                     std::move(request),
                                                     {},
                                                     std::move(done)}));
}

}  // namespace parley::client
