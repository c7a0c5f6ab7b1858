#include "shared/grpc_process.h"

#include <absl/synchronization/mutex.h>

namespace smallmind::shared {

void PrepareGrpcProcess() { absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore); }

}  // namespace smallmind::shared
