#include "worker/engine/rank_head.h"

#include "shared/check.h"

namespace smallmind::worker {

const float* RankHead(const ModelConfig& c, const Weights& w, int n, OpRunner& ops, float* x,
                      float* scratch) {
  SM_CHECK(c.rank_outputs > 0 && (w.cls.present() || w.cls_out.present()))
      << "RankHead needs a model with a classification head";
  float* cur = x;  // [n, width]
  int width = c.dim;
  if (w.cls.present()) {  // BERT's pooler: tanh(cls . x + cls_b)
    MatmulSource in = OpRunner::Source(cur, n, width);
    ops.Matmul(w.cls, &in, scratch);
    if (w.cls_b.present()) ops.AddBias(scratch, w.cls_b, n);
    width = static_cast<int>(w.cls.rows);
    ops.SoftCap(scratch, n, width, 1.0f);  // 1 * tanh(v / 1) = tanh(v): llama.cpp's ggml_tanh
    cur = scratch;
  }
  if (w.cls_out.present()) {  // the classifier: cls_out . h + cls_out_b
    MatmulSource in = OpRunner::Source(cur, n, width);
    float* dst = cur == x ? scratch : x;
    ops.Matmul(w.cls_out, &in, dst);
    width = static_cast<int>(w.cls_out.rows);
    if (w.cls_out_b.present()) ops.AddBias(dst, w.cls_out_b, n);
    cur = dst;
  }
  SM_CHECK(width == c.rank_outputs) << "head width " << width << ", config " << c.rank_outputs;
  return cur;
}

}  // namespace smallmind::worker
