#include "gateway/relay/rerank_call.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "gateway/relay/embed_call.h"
#include "shared/request_limits.h"

namespace smallmind::gateway {

using smallmind::v1::EmbedResponse;
using smallmind::v1::RerankRequest;
using smallmind::v1::RerankResponse;

shared::Status CheckRerankRequest(const RerankRequest& request) {
  if (request.request_id().size() > shared::kMaxRequestIdBytes) {
    return shared::InvalidArgument(fmt::format("request_id must be at most {} bytes, got {}",
                                               shared::kMaxRequestIdBytes,
                                               request.request_id().size()));
  }
  if (request.query().empty()) return shared::InvalidArgument("query must not be empty");
  if (request.documents_size() == 0 || request.documents_size() > kMaxEmbedInputs) {
    return shared::InvalidArgument(fmt::format("documents must hold [1, {}] documents, got {}",
                                               kMaxEmbedInputs, request.documents_size()));
  }
  for (int i = 0; i < request.documents_size(); i++) {
    if (request.documents(i).empty()) {
      return shared::InvalidArgument(fmt::format("documents[{}] is empty", i));
    }
  }
  return shared::Status::Ok();
}

RerankResponse RankResults(const RerankRequest& request, const EmbedResponse& scores) {
  const int n = std::min(request.documents_size(), scores.embeddings_size());
  const auto score = [&](int i) {
    const auto& values = scores.embeddings(i).values();
    return values.empty() ? 0.0f : values[0];
  };
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return score(a) > score(b); });
  if (request.top_n() > 0 && request.top_n() < order.size()) order.resize(request.top_n());
  RerankResponse out;
  out.set_request_id(scores.request_id());
  out.set_worker_id(scores.worker_id());
  *out.mutable_usage() = scores.usage();
  for (int i : order) {
    smallmind::v1::RerankResult* r = out.add_results();
    r->set_index(static_cast<uint32_t>(i));
    r->set_relevance_score(score(i));
    if (request.return_documents()) r->set_document(request.documents(i));
  }
  return out;
}

EmbedCancel RunRerank(std::shared_ptr<RelayEnv> env, RerankRequest request,
                      std::chrono::system_clock::time_point deadline, RerankDone done) {
  smallmind::v1::EmbedRequest embed;
  embed.set_request_id(request.request_id());
  for (const std::string& doc : request.documents()) embed.add_inputs()->set_text(doc);
  *embed.mutable_runtime() = request.runtime();
  if (request.has_model()) embed.set_model(request.model());
  std::string query = request.query();
  return EmbedCall::Run(
      std::move(env), std::move(embed), deadline,
      [request = std::move(request), done = std::move(done)](const shared::Status& status,
                                                             const EmbedResponse& scores) {
        done(status, status.ok() ? RankResults(request, scores) : RerankResponse());
      },
      std::move(query));
}

}  // namespace smallmind::gateway
