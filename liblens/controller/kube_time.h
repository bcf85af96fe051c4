// The times the Kubernetes API writes (metav1.Time, metav1.MicroTime): RFC
// 3339 date-times, "2026-11-20T08:15:02Z", "2026-11-20T08:15:02.123456Z",
// "2026-11-20T10:15:02+02:00".
#ifndef LENS_CONTROLLER_KUBE_TIME_H_
#define LENS_CONTROLLER_KUBE_TIME_H_

#include <string_view>

#include "lens/model.h"
#include "lens/status.h"

namespace lens::controller {

// Parses an RFC 3339 date-time (section 5.6: 'T' or 't', then 'Z', 'z' or a
// +hh:mm/-hh:mm offset) into UTC. Fractions of a second may have any number
// of digits; those finer than a microsecond are dropped (truncated, so a
// time never moves later). Years 1678-2261 (what the 64-bit nanosecond
// system clock holds, so a time converts anywhere); a leap second (:60) is
// refused, as Go's time.Parse refuses it. InvalidArgument naming the text
// otherwise.
StatusOr<Timestamp> ParseKubeTime(std::string_view text);

}  // namespace lens::controller

#endif  // LENS_CONTROLLER_KUBE_TIME_H_
