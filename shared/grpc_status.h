// The only mapping between shared::Status and grpc::Status (STYLE §6). Called at the edges of
// every gRPC service and client in both processes. Free functions; thread-safe.
#pragma once

#include <grpcpp/support/status.h>

#include "shared/status.h"

namespace smallmind::shared {

grpc::StatusCode ToGrpcCode(StatusCode code);
// Codes the project does not use (ALREADY_EXISTS, DATA_LOSS, ...) become kInternal, keeping the
// message; UNKNOWN and ABORTED become kInternal too.
StatusCode FromGrpcCode(grpc::StatusCode code);

grpc::Status ToGrpcStatus(const Status& status);
// Keeps code and message, except that gRPC's RESOURCE_EXHAUSTED for a message over a size limit
// becomes INVALID_ARGUMENT (never retried, never a 429 queue_full), saying so.
Status FromGrpcStatus(const grpc::Status& status);

}  // namespace smallmind::shared
