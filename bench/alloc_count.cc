// Counts the heap allocations of the process it is preloaded into (LD_PRELOAD), for
// bench/allocations.sh: malloc, calloc, realloc and the aligned ones (operator new goes
// through malloc), passed on to glibc's own. At exit the count is written to the file named
// by BOXOFFICE_ALLOC_COUNT_OUT, as "allocations=N".
#include <atomic>
#include <cstdio>
#include <cstdlib>

extern "C" {

void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

namespace {
std::atomic<unsigned long long> allocations;
}

void* malloc(size_t n) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t alignment, size_t n) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(alignment, n);
}
void* memalign(size_t alignment, size_t n) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = __libc_memalign(alignment, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}

__attribute__((destructor)) static void Report() {
  const char* path = std::getenv("BOXOFFICE_ALLOC_COUNT_OUT");
  if (!path) return;
  std::FILE* f = std::fopen(path, "w");
  if (!f) return;
  std::fprintf(f, "allocations=%llu\n", allocations.load());
  std::fclose(f);
}

}  // extern "C"
