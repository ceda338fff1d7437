// Mutex and MutexLock: std::mutex with clang's thread-safety annotations, so that the
// compiler checks which lock guards which member (`make check` runs clang with
// -Wthread-safety -Werror over src/: scripts/thread-safety.sh).
//
//   Mutex mu_;
//   int count_ BOX_GUARDED_BY(mu_);
//   void BumpLocked() BOX_REQUIRES(mu_);
//   { MutexLock lock(mu_); ++count_; }
//
// Under GCC the annotations are empty. A Mutex waited on with a condition variable is
// locked through std::unique_lock<Mutex> and std::condition_variable_any; code under such a
// lock states it holds the mutex with AssertHeld(), which clang then takes as given.
#pragma once

#include <mutex>

#if defined(__clang__)
#define BOX_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define BOX_THREAD_ANNOTATION(x)
#endif

#define BOX_CAPABILITY(x) BOX_THREAD_ANNOTATION(capability(x))
#define BOX_SCOPED_CAPABILITY BOX_THREAD_ANNOTATION(scoped_lockable)
#define BOX_GUARDED_BY(x) BOX_THREAD_ANNOTATION(guarded_by(x))
#define BOX_PT_GUARDED_BY(x) BOX_THREAD_ANNOTATION(pt_guarded_by(x))
#define BOX_ACQUIRED_BEFORE(...) BOX_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define BOX_ACQUIRED_AFTER(...) BOX_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define BOX_REQUIRES(...) BOX_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define BOX_ACQUIRE(...) BOX_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define BOX_RELEASE(...) BOX_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define BOX_TRY_ACQUIRE(...) BOX_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define BOX_EXCLUDES(...) BOX_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define BOX_ASSERT_CAPABILITY(x) BOX_THREAD_ANNOTATION(assert_capability(x))
#define BOX_NO_THREAD_SAFETY_ANALYSIS BOX_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace boxoffice {

class BOX_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() BOX_ACQUIRE() { mu_.lock(); }
  void Unlock() BOX_RELEASE() { mu_.unlock(); }
  // For std::unique_lock<Mutex> with std::condition_variable_any (BasicLockable).
  void lock() BOX_ACQUIRE() { mu_.lock(); }
  void unlock() BOX_RELEASE() { mu_.unlock(); }
  bool try_lock() BOX_TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds this mutex (taken through a std::unique_lock).
  void AssertHeld() const BOX_ASSERT_CAPABILITY(this) {}

 private:
  std::mutex mu_;
};

// Holds a Mutex for its scope.
class BOX_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) BOX_ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() BOX_RELEASE() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace boxoffice
