// Process lifecycle for daemons: wait for SIGTERM/SIGINT without doing work in
// a signal handler.
#ifndef LENS_PROCESS_H_
#define LENS_PROCESS_H_

#include "lens/export.h"

namespace lens {

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread. Call first thing in
// main, before any thread starts, so every thread inherits the mask and the
// signals wait for WaitForShutdownSignal().
LENS_EXPORT void BlockShutdownSignals();
// Waits until SIGTERM, SIGINT or SIGHUP arrives (after
// BlockShutdownSignals()); returns the signal number.
LENS_EXPORT int WaitForShutdownSignal();

}  // namespace lens

#endif  // LENS_PROCESS_H_
