// Lens version. CMake reads the numbers below; keep them the only source of
// truth.
#ifndef LENS_VERSION_H_
#define LENS_VERSION_H_

#include "lens/export.h"

#define LENS_VERSION_MAJOR 0
#define LENS_VERSION_MINOR 1
#define LENS_VERSION_PATCH 0
#define LENS_VERSION_STRING "0.1.0"

namespace lens {
// The library's version as "MAJOR.MINOR.PATCH"; compare with
// LENS_VERSION_STRING to detect a header/library mismatch.
LENS_EXPORT const char* Version();
}  // namespace lens

#endif  // LENS_VERSION_H_
