// What the fuzz targets share: a property that does not hold aborts, which libFuzzer
// reports as a crash with the input that broke it.
#pragma once

#include <cstdlib>

namespace boxoffice::fuzz {

inline void Require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace boxoffice::fuzz
