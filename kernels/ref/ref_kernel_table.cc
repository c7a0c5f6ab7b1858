// RefKernelTable(): the KernelTable of the scalar reference kernels.
#include "kernels/kernels.h"
#include "kernels/ref/attention_ref.h"
#include "kernels/ref/elementwise_ref.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/rmsnorm_ref.h"
#include "kernels/ref/rope_ref.h"
#include "kernels/ref/softmax_ref.h"

namespace smallmind::kernels {

KernelTable RefKernelTable() {
  KernelTable t;
  t.matmul_f32 = &MatmulF32Ref;
  t.rmsnorm = &RmsNormRef;
  t.rope = &RopeRef;
  t.softmax = &SoftmaxRef;
  t.swiglu = &SwiGluRef;
  t.add = &AddRef;
  t.attention = &AttentionRef;
  return t;
}

}  // namespace smallmind::kernels
