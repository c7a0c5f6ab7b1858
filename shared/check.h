// SM_CHECK / SM_DCHECK: invariants of the program (never user input or file contents, which get a
// Status). A failed check prints file:line and the streamed message, then aborts. Thread-safe.
#pragma once

#include <sstream>

namespace smallmind::shared {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* cond);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure& operator<<(const T& v) {
    stream_ << v;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

// Lets the macro below be an expression whose stream operands are evaluated only on failure.
struct CheckVoidify {
  void operator&(const CheckFailure&) {}
};

}  // namespace smallmind::shared

#define SM_CHECK(cond)                           \
  (cond) ? (void)0                               \
         : ::smallmind::shared::CheckVoidify() & \
               ::smallmind::shared::CheckFailure(__FILE__, __LINE__, #cond)

#ifdef NDEBUG
#define SM_DCHECK(cond) \
  while (false) SM_CHECK(cond)
#else
#define SM_DCHECK(cond) SM_CHECK(cond)
#endif
