#include "worker/engine/op_runner.h"

#include <algorithm>

#include "kernels/q8_act.h"
#include "shared/check.h"
#include "worker/model/tensor_view.h"

namespace smallmind::worker {
namespace {

using kernels::ExecMode;
using kernels::RowRange;

// Work (multiply-adds or element ops) below which another thread costs more than it saves: a
// wake-up and barrier take about 1-5 us, in which one core does some 10^4-10^5 SIMD multiply-adds.
constexpr int64_t kMinWorkPerThread = 1 << 15;

// Matmul rows are handed out in groups of this many so that every thread gets whole groups of the
// SIMD kernels' row tiles.
constexpr int kMatmulRowGroup = 16;

// Narrows `a` to the KV heads item.kv_heads and their query heads (q, out and the cache rows
// from the first of them; the rows of q and out keep the model's stride) and returns the item's
// tokens as rows of the narrowed args. A float or half cache (a kQ8 row ends in every head's
// scales).
RowRange OnlyKvHeads(const AttentionItem& item, kernels::AttentionArgs* a) {
  const int group = a->n_heads / a->n_kv_heads;
  const int first_token = item.rows.begin / a->n_heads, end_token = item.rows.end / a->n_heads;
  const int64_t q_offset = int64_t{item.kv_heads.begin} * group * a->head_dim;
  const int64_t kv_bytes =
      int64_t{item.kv_heads.begin} * a->head_dim * kernels::KvTypeBytes(a->kv.type);
  a->q_stride = static_cast<int>(a->QStride());
  a->q += q_offset;
  a->out += q_offset;
  if (a->sinks != nullptr) a->sinks += int64_t{item.kv_heads.begin} * group;
  a->n_kv_heads = item.kv_heads.size();
  a->n_heads = a->n_kv_heads * group;
  a->kv.k = static_cast<const char*>(a->kv.k) + kv_bytes;
  a->kv.v = static_cast<const char*>(a->kv.v) + kv_bytes;
  return RowRange{first_token * a->n_heads, end_token * a->n_heads};
}

// Multiply-adds of an item (rows x positions attended, at its middle token).
int64_t ItemWork(const AttentionItem& item, std::span<const kernels::AttentionArgs> args) {
  const kernels::AttentionArgs& a = args[item.seq];
  const int first_token = item.rows.begin / a.n_heads, end_token = item.rows.end / a.n_heads;
  const int64_t rows =
      item.kv_heads.empty()
          ? item.rows.size()
          : int64_t{end_token - first_token} * item.kv_heads.size() * (a.n_heads / a.n_kv_heads);
  const int mid = a.start_pos + (first_token + end_token) / 2;
  return rows * (mid + 1 - a.FirstPos(mid));
}

// The attention items of a step before any cut, and the op's size.
struct AttentionWork {
  int n_items = 0;
  int rows = 0;           // (token, head) rows of every seq
  int64_t positions = 0;  // (token, head, attended position) triples: the op's work
};

// Items: each seq's tokens in even runs of up to kAttentionTileTokens (a kernel call walks the
// cache once for all of a run's tokens), written to items[0, n_items).
AttentionWork TokenRuns(std::span<const kernels::AttentionArgs> args, AttentionItem* items) {
  AttentionWork w;
  for (int s = 0; s < static_cast<int>(args.size()); s++) {
    const kernels::AttentionArgs& a = args[s];
    const int runs =
        (a.n_tokens + kernels::kAttentionTileTokens - 1) / kernels::kAttentionTileTokens;
    const int per_item = (a.n_tokens + runs - 1) / std::max(1, runs);
    for (int t = 0; t < a.n_tokens; t += per_item) {
      const int end = std::min(a.n_tokens, t + per_item);
      items[w.n_items++] = AttentionItem{s, RowRange{t * a.n_heads, end * a.n_heads}};
    }
    w.rows += a.n_tokens * a.n_heads;
    w.positions += static_cast<int64_t>(a.start_pos + a.n_tokens) * a.n_tokens * a.n_heads;
  }
  return w;
}

// Whether a run of tokens is cut by KV heads (each part reads only its heads' slices, once for
// all the tokens) rather than by rows: not over a kQ8 cache, whose rows end in every head's scales.
bool CutByKvHeads(const AttentionItem& item, const kernels::AttentionArgs& a) {
  return item.rows.size() > a.n_heads && a.n_kv_heads > 1 && a.kv.type != kernels::KvType::kQ8;
}

// How many parts the items are shared out as. Fewer items than parts to share out (a few decodes,
// a short prefill chunk): each is cut (CutItems), so the threads get even shares. On more than
// one thread the parallel path cuts finer, into parts the threads take as they finish, where a
// finer cut reads nothing twice: a few decodes (their rows attend to different lengths) and runs
// cut by KV heads (a 16-token prefix-cache hit: in two parts, a core slowed by anything else held
// the step back; decode_bench pp16@d512, 2 threads: attention 2.9 -> 2.3 ms). Not runs of tokens
// over a kQ8 cache, which are nearly even: cut finer, each part would read the cache again.
int CutTarget(std::span<const kernels::AttentionArgs> args, const AttentionItem* items, int n_items,
              const OpLimits& limits) {
  int target = limits.max_threads;
  if (limits.mode == ExecMode::kParallel && target > 1 && n_items < 4 * target &&
      std::all_of(items, items + n_items, [&](const AttentionItem& item) {
        return args[item.seq].n_tokens == 1 || CutByKvHeads(item, args[item.seq]);
      })) {
    target *= 4;
  }
  return target;
}

// Cuts each of items[0, n_items) into ceil(target / n_items) parts in place (some may be empty)
// and returns the new count: a decode token into runs of its heads (the kernel reads a run's slice
// of every cache row) that never part the query heads of one KV head (each part would read that
// head's whole cache again: a gemma3-shaped decode at 8192 positions, 4 query heads on 1 KV head,
// window_bench on 2 threads: attention 18.7 ms a token cut by heads, 5.7 on one thread), a run of
// tokens into runs of its KV heads (CutByKvHeads) or else of rows.
int CutItems(std::span<const kernels::AttentionArgs> args, AttentionItem* items, int n_items,
             int target) {
  const int pieces = (target + n_items - 1) / n_items;
  for (int i = n_items - 1; i >= 0; i--) {  // back to front: item i moves to i * pieces
    const AttentionItem item = items[i];
    const kernels::AttentionArgs& a = args[item.seq];
    const bool kv_cut = CutByKvHeads(item, a);
    // A decode token's rows in units of whole GQA groups.
    const int unit = !kv_cut && item.rows.size() == a.n_heads ? a.n_heads / a.n_kv_heads : 1;
    const int len = kv_cut ? a.n_kv_heads : item.rows.size() / unit;
    const int n = std::min(pieces, len);
    for (int k = 0; k < pieces; k++) {
      AttentionItem& part = items[i * pieces + k];
      part = AttentionItem{item.seq, RowRange{item.rows.end, item.rows.end}};  // empty
      if (k >= n) continue;
      if (kv_cut) {
        part.rows = item.rows;
        part.kv_heads = RowRange{len * k / n, len * (k + 1) / n};
      } else {
        part.rows = RowRange{item.rows.begin + unit * (len * k / n),
                             item.rows.begin + unit * (len * (k + 1) / n)};
      }
    }
  }
  return n_items * pieces;
}

// Reorders items[0, n) so that the static split of ParallelFor (`threads` runs of consecutive
// items, kernels::StaticRows) gives the threads even work: a causal chunk's later runs and
// deeper sequences attend to more positions, so the items are dealt out heaviest first, in snake
// order over the threads (0, 1, .., T-1, T-1, .., 0, ..) each up to its run's length, then laid
// out run by run. `dealt`: room for n items.
void DealForStaticSplit(std::span<const kernels::AttentionArgs> args, int threads,
                        AttentionItem* items, int n, AttentionItem* dealt) {
  threads = std::min(threads, n);
  if (threads <= 1) return;
  std::sort(items, items + n, [&](const AttentionItem& x, const AttentionItem& y) {
    return ItemWork(x, args) > ItemWork(y, args);
  });
  int filled[ThreadPool::kMaxThreads] = {};
  int turn = 0;  // position in the snake, 0 .. 2 * threads - 1
  for (int i = 0; i < n; i++) {
    int t = 0;
    for (;;) {  // the next thread in snake order whose run has room
      t = turn < threads ? turn : 2 * threads - 1 - turn;
      turn = (turn + 1) % (2 * threads);
      if (filled[t] < kernels::StaticRows(n, threads, t).size()) break;
    }
    dealt[kernels::StaticRows(n, threads, t).begin + filled[t]++] = items[i];
  }
  std::copy(dealt, dealt + n, items);
}

}  // namespace

OpRunner::OpRunner(const kernels::KernelTable& table, const PackedWeights& packed, ThreadPool* pool,
                   const OpLimits& limits, Activations* act)
    : table_(table), packed_(packed), pool_(pool), limits_(limits), act_(act) {
  SM_DCHECK(limits_.max_threads >= 1 && limits_.max_threads <= act_->max_threads);
}

int OpRunner::Threads(int n_rows, int64_t work_per_row) const {
  const int64_t by_rows = n_rows / std::max(1, limits_.min_rows_per_thread);
  const int64_t by_work = static_cast<int64_t>(n_rows) * work_per_row / kMinWorkPerThread;
  const int64_t n = std::min<int64_t>({limits_.max_threads, by_rows, by_work});
  return static_cast<int>(std::max<int64_t>(1, n));
}

Partition OpRunner::RowsPartition() const {
  return limits_.mode == ExecMode::kDeterministic ? Partition::kStaticRows : Partition::kDynamic;
}

const uint8_t* OpRunner::QuantizedRows(MatmulSource* in, kernels::MatmulInput input) {
  SM_DCHECK(in->n_tokens <= act_->max_source_rows);
  const int scheme = input == kernels::MatmulInput::kQ8_1  ? 1
                     : input == kernels::MatmulInput::kQ8K ? 2
                                                           : 0;  // kQ8, kQ8Octets of one token
  uint8_t* xq = (scheme == 0 ? act_->xq : scheme == 1 ? act_->xq_1 : act_->xq_k).data();
  if (in->q8_version[scheme] == q8_version_[scheme] && in->q8_version[scheme] >= 0) return xq;
  const OpTimer timer(limits_.profile, OpKind::kQuantize);
  const kernels::QuantizeQ8Fn quantize = scheme == 0   ? table_.quantize_q8
                                         : scheme == 1 ? table_.quantize_q8_1
                                                       : table_.quantize_q8_k;
  SM_CHECK(quantize != nullptr) << "the kernel table has no quantizer for a matmul's input";
  pool_->ParallelFor(in->n_tokens, Threads(in->n_tokens, in->dim), Partition::kStaticRows,
                     [&](RowRange tokens, int) { quantize(in->x, xq, in->dim, tokens); });
  in->q8_version[scheme] = ++q8_version_[scheme];
  return xq;
}

void OpRunner::QuantizeOctets(MatmulSource* in) {
  SM_DCHECK(in->n_tokens <= act_->max_source_rows);
  const OpTimer timer(limits_.profile, OpKind::kQuantize);
  uint8_t* octets = act_->xq_octets.data();
  const kernels::QuantizeQ8OctetsFn quantize = table_.quantize_q8_octets;
  constexpr int kOctet = kernels::kQ8ActOctet;
  const int n_octets = (in->n_tokens + kOctet - 1) / kOctet;
  pool_->ParallelFor(
      n_octets, Threads(n_octets, int64_t{kOctet} * in->dim), Partition::kStaticRows,
      [&](RowRange o, int) { quantize(in->x, octets, in->dim, in->n_tokens, o.begin, o.end); });
  in->octets_version = ++octets_version_;
}

void OpRunner::Matmul(const TensorView& w, MatmulSource* in, float* y) { Matmuls({{w, y}}, in); }

void OpRunner::Matmuls(std::initializer_list<MatmulJob> jobs, MatmulSource* in) {
  constexpr int kMaxJobs = 4;
  SM_CHECK(jobs.size() <= kMaxJobs)
      << jobs.size() << " matmuls in one region, at most " << kMaxJobs;
  struct Prepared {
    const kernels::MatmulOp* op;
    const void* w;
    const void* x;
    float* y;
    int out_dim, in_dim;
    int first_group;  // index of this job's first row group among all jobs' groups
  };
  Prepared p[kMaxJobs];
  int n_jobs = 0, groups = 0;
  int64_t work = 0;
  for (const MatmulJob& j : jobs) {
    const kernels::MatmulOp* op = table_.MatmulFor(j.w.type);
    const void* x = in->x;
    if (op->input == kernels::MatmulInput::kQ8Octets && in->n_tokens > 1) {
      if (in->octets_version != octets_version_ || in->octets_version < 0) QuantizeOctets(in);
      x = act_->xq_octets.data();
    } else if (op->input != kernels::MatmulInput::kF32) {  // Q8 rows (kQ8Octets: of one token)
      x = QuantizedRows(in, op->input);
    }
    const int out_dim = static_cast<int>(j.w.rows);
    p[n_jobs++] =
        Prepared{op, packed_.Data(j.w, *op), x, j.y, out_dim, static_cast<int>(j.w.cols), groups};
    groups += (out_dim + kMatmulRowGroup - 1) / kMatmulRowGroup;
    work += static_cast<int64_t>(out_dim) * j.w.cols;
  }
  const int n_tokens = in->n_tokens;
  const OpTimer timer(limits_.profile, OpKind::kMatmul, n_jobs, static_cast<int>(work / in->dim),
                      in->dim);
  const int rows = groups * kMatmulRowGroup;
  const int threads = Threads(rows, work * n_tokens / std::max(1, rows));
  pool_->ParallelFor(groups, threads, RowsPartition(), [&](RowRange g, int) {
    for (int i = 0; i < n_jobs; i++) {
      const Prepared& j = p[i];
      const int job_groups = (j.out_dim + kMatmulRowGroup - 1) / kMatmulRowGroup;
      const int lo = std::max(g.begin - j.first_group, 0);
      const int hi = std::min(g.end - j.first_group, job_groups);
      if (lo >= hi) continue;
      const RowRange rows{lo * kMatmulRowGroup, std::min(j.out_dim, hi * kMatmulRowGroup)};
      j.op->fn(j.w, j.x, j.y, n_tokens, j.in_dim, j.out_dim, rows);
    }
  });
}

void OpRunner::ExpertMatmuls(std::span<const ExpertMatmul> jobs, MatmulSource* in) {
  struct Prepared {
    const kernels::MatmulOp* op;
    const void* w;
    const void* x;
  };
  constexpr int kMaxJobs = 2 * 1024;  // gate and up of every expert (gguf_loader's kMaxExperts)
  SM_CHECK(jobs.size() <= kMaxJobs) << jobs.size() << " expert matmuls in one region";
  Prepared p[kMaxJobs];
  int32_t octet_first[kMaxJobs];  // job i's first octet in act_->xq_octets; -1: not octets
  int n_octets = 0;
  int groups = 0;
  int64_t work = 0;  // multiply-adds
  for (size_t i = 0; i < jobs.size(); i++) {
    const ExpertMatmul& j = jobs[i];
    const kernels::MatmulOp* op = table_.MatmulFor(j.w->type);
    p[i] = Prepared{op, packed_.Data(*j.w, *op), nullptr};
    octet_first[i] = -1;
    if (op->input == kernels::MatmulInput::kQ8Octets && j.n_rows > 1) {
      const bool shared = i > 0 && octet_first[i - 1] >= 0 && jobs[i - 1].first_row == j.first_row;
      octet_first[i] = shared ? octet_first[i - 1] : n_octets;
      if (!shared) n_octets += (j.n_rows + kernels::kQ8ActOctet - 1) / kernels::kQ8ActOctet;
    } else if (op->input == kernels::MatmulInput::kF32) {
      p[i].x = in->x + static_cast<int64_t>(j.first_row) * in->dim;
    } else {
      p[i].x = QuantizedRows(in, op->input) + kernels::Q8ActRowBytes(in->dim) * j.first_row;
    }
    groups += static_cast<int>((j.w->rows + kMatmulRowGroup - 1) / kMatmulRowGroup);
    work += j.w->rows * j.w->cols * j.n_rows;
  }
  if (n_octets > 0) {
    QuantizeExpertOctets(jobs, octet_first, in);
    const size_t octet_bytes = kernels::Q8ActOctetsBytes(kernels::kQ8ActOctet, in->dim);
    for (size_t i = 0; i < jobs.size(); i++) {
      if (octet_first[i] >= 0) p[i].x = act_->xq_octets.data() + octet_bytes * octet_first[i];
    }
  }
  if (groups == 0) return;
  // One profile entry per input width, whichever experts (an entry per expert mix overflowed the
  // profile, and its time showed as decode_bench's gap).
  const OpTimer timer(limits_.profile, OpKind::kExpertMatmul, 0, 0, in->dim);
  const int rows = groups * kMatmulRowGroup;
  const int threads = Threads(rows, work / std::max(1, rows));
  pool_->ParallelFor(groups, threads, RowsPartition(), [&](RowRange g, int) {
    int first_group = 0;  // of the current job among all jobs' groups
    for (size_t i = 0; i < jobs.size() && first_group < g.end; i++) {
      const ExpertMatmul& j = jobs[i];
      const int out_dim = static_cast<int>(j.w->rows);
      const int job_groups = (out_dim + kMatmulRowGroup - 1) / kMatmulRowGroup;
      const int lo = std::max(g.begin - first_group, 0);
      const int hi = std::min(g.end - first_group, job_groups);
      first_group += job_groups;
      if (lo >= hi) continue;
      const RowRange r{lo * kMatmulRowGroup, std::min(out_dim, hi * kMatmulRowGroup)};
      p[i].op->fn(p[i].w, p[i].x, j.y, j.n_rows, in->dim, out_dim, r);
    }
  });
}

void OpRunner::QuantizeExpertOctets(std::span<const ExpertMatmul> jobs, const int32_t* octet_first,
                                    const MatmulSource* in) {
  const OpTimer timer(limits_.profile, OpKind::kQuantize);
  const size_t octet_bytes = kernels::Q8ActOctetsBytes(kernels::kQ8ActOctet, in->dim);
  const int n = static_cast<int>(jobs.size());
  pool_->ParallelFor(
      n, Threads(n, int64_t{2} * kernels::kQ8ActOctet * in->dim), Partition::kStaticRows,
      [&](RowRange r, int) {
        for (int i = r.begin; i < r.end; i++) {
          if (octet_first[i] < 0 || (i > 0 && octet_first[i - 1] == octet_first[i])) continue;
          const ExpertMatmul& j = jobs[i];
          const int octets = (j.n_rows + kernels::kQ8ActOctet - 1) / kernels::kQ8ActOctet;
          table_.quantize_q8_octets(in->x + static_cast<int64_t>(j.first_row) * in->dim,
                                    act_->xq_octets.data() + octet_bytes * octet_first[i], in->dim,
                                    j.n_rows, 0, octets);
        }
      });
  octets_version_++;  // the buffer holds these experts' octets now, not any source's
}

void OpRunner::WeightedRowSum(const float* y, const int32_t* row, const float* weight, int k, int n,
                              int dim, float* out) {
  const OpTimer timer(limits_.profile, OpKind::kAdd);
  pool_->ParallelFor(n, Threads(n, int64_t{2} * k * dim), Partition::kStaticRows,
                     [&](RowRange tokens, int) {
                       for (int t = tokens.begin; t < tokens.end; t++) {
                         float* o = out + static_cast<int64_t>(t) * dim;  // [dim]
                         for (int j = 0; j < k; j++) {
                           const float* yj = y + static_cast<int64_t>(row[t * k + j]) * dim;
                           const float w = weight[t * k + j];
                           // The product rounded, then added: llama.cpp's ggml_mul then ggml_add.
                           for (int i = 0; i < dim; i++) {
                             const float prod = w * yj[i];
                             o[i] = j == 0 ? prod : o[i] + prod;
                           }
                         }
                       }
                     });
}

void OpRunner::AddScaledRows(float* out, const float* y, const float* scale, int n, int dim) {
  const OpTimer timer(limits_.profile, OpKind::kAdd);
  pool_->ParallelFor(n, Threads(n, int64_t{2} * dim), Partition::kStaticRows,
                     [&](RowRange tokens, int) {
                       for (int t = tokens.begin; t < tokens.end; t++) {
                         float* o = out + static_cast<int64_t>(t) * dim;      // [dim]
                         const float* r = y + static_cast<int64_t>(t) * dim;  // [dim]
                         const float s = scale[t];
                         for (int i = 0; i < dim; i++) {
                           const float prod = s * r[i];
                           o[i] += prod;
                         }
                       }
                     });
}

void OpRunner::RmsNorm(const float* x, const TensorView& weight, float* out, int n, int dim,
                       float eps) {
  const OpTimer timer(limits_.profile, OpKind::kRmsNorm);
  const float* wt = weight.f32();
  pool_->ParallelFor(n, Threads(n, 2 * dim), Partition::kStaticRows,
                     [&](RowRange tokens, int) { table_.rmsnorm(x, wt, out, dim, eps, tokens); });
}

void OpRunner::LayerNorm(const float* x, const TensorView& weight, const TensorView& bias,
                         float* out, int n, int dim, float eps) {
  const OpTimer timer(limits_.profile, OpKind::kRmsNorm);
  const float* wt = weight.f32();
  const float* b = bias.f32();
  pool_->ParallelFor(n, Threads(n, 3 * dim), Partition::kStaticRows, [&](RowRange tokens, int) {
    table_.layernorm(x, wt, b, out, dim, eps, tokens);
  });
}

void OpRunner::Gelu(float* x, int n, int hidden) {
  const OpTimer timer(limits_.profile, OpKind::kSwiGlu);
  pool_->ParallelFor(n, Threads(n, 4 * hidden), Partition::kStaticRows,
                     [&](RowRange tokens, int) { table_.gelu(x, hidden, tokens); });
}

void OpRunner::Rope(float* x, const int32_t* positions, int n, int n_heads, int head_dim,
                    const kernels::RopeFreqs& freqs, kernels::RopeLayout layout) {
  const OpTimer timer(limits_.profile, OpKind::kRope);
  const int rows = n * n_heads;
  pool_->ParallelFor(
      rows, Threads(rows, 4 * head_dim), Partition::kStaticRows,
      [&](RowRange r, int) { table_.rope(x, positions, n_heads, head_dim, freqs, layout, r); });
}

void OpRunner::SwiGlu(float* gate, const float* up, int n, int hidden) {
  const OpTimer timer(limits_.profile, OpKind::kSwiGlu);
  pool_->ParallelFor(n, Threads(n, 4 * hidden), Partition::kStaticRows,
                     [&](RowRange tokens, int) { table_.swiglu(gate, up, hidden, tokens); });
}

void OpRunner::GatedActivation(FfnActivation act, float* gate, const float* up, int n, int hidden) {
  if (act == FfnActivation::kSilu) return SwiGlu(gate, up, n, hidden);
  if (act == FfnActivation::kGeluTanh) return GeGlu(gate, up, n, hidden);
  const OpTimer timer(limits_.profile, OpKind::kSwiGlu);
  pool_->ParallelFor(n, Threads(n, 4 * hidden), Partition::kStaticRows, [&](RowRange tokens, int) {
    table_.swiglu_oai(gate, up, hidden, kSwiGluOaiAlpha, kSwiGluOaiLimit, tokens);
  });
}

void OpRunner::GeGlu(float* gate, const float* up, int n, int hidden) {
  const OpTimer timer(limits_.profile, OpKind::kSwiGlu);
  pool_->ParallelFor(n, Threads(n, 4 * hidden), Partition::kStaticRows,
                     [&](RowRange tokens, int) { table_.geglu(gate, up, hidden, tokens); });
}

void OpRunner::Scale(float* x, int n, int dim, float s) {
  const OpTimer timer(limits_.profile, OpKind::kScale);
  pool_->ParallelFor(n, Threads(n, dim), Partition::kStaticRows,
                     [&](RowRange tokens, int) { table_.scale(x, dim, s, tokens); });
}

void OpRunner::SoftCap(float* x, int n, int dim, float cap) {
  const OpTimer timer(limits_.profile, OpKind::kSoftCap);
  // Rows of kPart values when they tile a row (each element is capped alone, so any split gives
  // the same bits): a thread's share of a decode step's logits, not the whole row on one thread.
  constexpr int kPart = 1024;
  const int part = dim % kPart == 0 ? kPart : dim;
  const int rows = static_cast<int>(static_cast<int64_t>(n) * dim / part);
  pool_->ParallelFor(rows, Threads(rows, 16 * part), Partition::kStaticRows,
                     [&](RowRange r, int) { table_.soft_cap(x, part, cap, r); });
}

void OpRunner::Add(float* x, const float* delta, int n, int dim) {
  const OpTimer timer(limits_.profile, OpKind::kAdd);
  pool_->ParallelFor(n, Threads(n, dim), Partition::kStaticRows,
                     [&](RowRange tokens, int) { table_.add(x, delta, dim, tokens); });
}

void OpRunner::AddBias(float* x, const TensorView& bias, int n) {
  const OpTimer timer(limits_.profile, OpKind::kBias);
  const int dim = static_cast<int>(bias.cols);
  const float* b = bias.f32();
  pool_->ParallelFor(n, Threads(n, dim), Partition::kStaticRows,
                     [&](RowRange tokens, int) { table_.add_bias(x, b, dim, tokens); });
}

void OpRunner::Embed(const TensorView& table, std::span<const int32_t> tokens, float* x) {
  const OpTimer timer(limits_.profile, OpKind::kEmbed);
  const kernels::DequantRowFn dequant = table_.DequantRowFor(table.type);
  const int dim = static_cast<int>(table.cols);
  const size_t row_bytes =
      kernels::RowBytes(*kernels::GetDTypeTraits(static_cast<uint32_t>(table.type)), dim);
  const auto* bytes = static_cast<const uint8_t*>(table.data);
  const int n = static_cast<int>(tokens.size());
  pool_->ParallelFor(n, Threads(n, dim), Partition::kStaticRows, [&](RowRange r, int) {
    for (int t = r.begin; t < r.end; t++) {
      dequant(bytes + row_bytes * static_cast<size_t>(tokens[t]), x + static_cast<int64_t>(t) * dim,
              dim);
    }
  });
}

void OpRunner::Attention(std::span<const kernels::AttentionArgs> args) {
  const OpTimer timer(limits_.profile, OpKind::kAttention);
  AttentionItem* items = act_->attention_items.data();
  const AttentionWork work = TokenRuns(args, items);
  if (work.rows == 0) return;
  const int target = CutTarget(args, items, work.n_items, limits_);
  const int n_items =
      work.n_items < target ? CutItems(args, items, work.n_items, target) : work.n_items;
  SM_DCHECK(n_items <= static_cast<int>(act_->attention_items.size()));
  // Threads by (token, head) rows: average positions attended per row times the per-position
  // work (q.k and the V sum).
  const int threads = Threads(work.rows, work.positions / work.rows * 4 * args[0].head_dim);
  // Rows are independent, so any split gives the same bits; the parallel path balances the
  // uneven causal rows dynamically, the deterministic path's fixed split by the items' order.
  if (limits_.mode == ExecMode::kDeterministic) {
    DealForStaticSplit(args, std::min(threads, limits_.max_threads), items, n_items,
                       act_->attention_items_dealt.data());
  }
  const int64_t scratch = act_->scores_per_thread;
  pool_->ParallelFor(n_items, threads, RowsPartition(), [&](RowRange r, int thread) {
    for (int i = r.begin; i < r.end; i++) {
      const AttentionItem& item = items[i];
      if (item.rows.empty()) continue;
      kernels::AttentionArgs a = args[item.seq];
      a.scores = act_->scores.data() + thread * scratch;
      a.scores_size = scratch;
      table_.attention(a, item.kv_heads.empty() ? item.rows : OnlyKvHeads(item, &a));
    }
  });
}

}  // namespace smallmind::worker
