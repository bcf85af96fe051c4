// Process lifecycle for daemons: wait for SIGTERM/SIGINT without doing work in
// a signal handler.
#ifndef LENS_CORE_PROCESS_H_
#define LENS_CORE_PROCESS_H_

namespace lens {

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread. Call first thing in
// main, before any thread starts, so every thread inherits the mask and the
// signals wait for WaitForShutdownSignal().
void BlockShutdownSignals();
// Waits until SIGTERM, SIGINT or SIGHUP arrives (after
// BlockShutdownSignals()); returns the signal number.
int WaitForShutdownSignal();

}  // namespace lens

#endif  // LENS_CORE_PROCESS_H_
