// How the `lens` module reports errors. Internal to the module.
#ifndef LENS_BINDINGS_PYTHON_ERRORS_H_
#define LENS_BINDINGS_PYTHON_ERRORS_H_

#include <string>

#include "lens/status.h"

namespace lens::python {

// The one place where a Status becomes a Python exception: NotFoundError,
// PermissionDeniedError, InvalidArgumentError or LensError, with the Status
// message and a `code` attribute ("UNAVAILABLE", ...). NotFoundError and
// PermissionDeniedError are OSErrors with `errno` (ENOENT, EACCES),
// `strerror` (the message) and, when given, `filename`. Needs the GIL.
void ThrowIfError(const Status& status, const std::string& filename = "");

}  // namespace lens::python

#endif  // LENS_BINDINGS_PYTHON_ERRORS_H_
