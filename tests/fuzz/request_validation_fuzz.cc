// libFuzzer target for request validation: any bytes a client can send as a GenerateRequest either
// fail to parse (gRPC refuses them before the gateway) or go through gateway::Validate, which must
// give INVALID_ARGUMENT with a message, or a ValidatedRequest whose defaults are filled in and
// which validates again to itself; never crash, hang or read out of bounds. Built by
// tests/fuzz/CMakeLists.txt with clang only (-fsanitize=fuzzer,address,undefined).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gateway/admission/validate.h"
#include "smallmind/v1/inference.pb.h"

namespace {

using smallmind::gateway::Validate;
using smallmind::v1::GenerateRequest;

// An invariant broken: abort so libFuzzer keeps the input.
void Require(bool condition) {
  if (!condition) std::abort();
}

void Exercise(const GenerateRequest& request) {
  auto validated = Validate(request, "gen-1");
  if (!validated.ok()) {
    Require(validated.status().code() == smallmind::shared::StatusCode::kInvalidArgument);
    Require(!validated.status().message().empty());
    return;
  }
  const GenerateRequest& out = validated->proto();
  Require(!out.request_id().empty());
  Require(request.request_id().empty() ? out.request_id() == "gen-1"
                                       : out.request_id() == request.request_id());
  Require(std::isfinite(out.sampling().temperature()));
  Require(out.sampling().top_p() > 0 && out.sampling().top_p() <= 1);
  Require(out.sampling().repetition_penalty() > 0);
  // Validation is idempotent: what it let through passes again, unchanged.
  auto again = Validate(out, "gen-2");
  Require(again.ok());
  Require(again->proto().SerializeAsString() == out.SerializeAsString());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  GenerateRequest request;
  if (request.ParseFromArray(data, static_cast<int>(size))) Exercise(request);
  return 0;
}
