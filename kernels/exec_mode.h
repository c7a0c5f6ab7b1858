// ExecMode: which kernel path a step runs. Travels in the StepPlan (never a global, STYLE §14).
#pragma once

namespace smallmind::kernels {

enum class ExecMode {
  kDeterministic,  // fixed reduction order; output bits independent of threads, batch, chunking
  kParallel,       // fastest; may differ in the last bits across batches
};

}  // namespace smallmind::kernels
