// The model every program serves when given no --model (gateway, worker, the CLI's offline bench):
// stories260K, the small real model embedded in the worker binary (models/stories260K). One
// definition for both processes; constants only.
#pragma once

namespace smallmind::shared {

inline constexpr char kDefaultModel[] = "builtin:stories260K";

}  // namespace smallmind::shared
