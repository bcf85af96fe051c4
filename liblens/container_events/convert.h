// Conversions between the store's container rows and the lens.v1 wire
// messages of the node -> lens-jobs event stream. Shared by the sender (agent
// side) and the server (lens-jobs side).
//
// Times travel as Unix microseconds; 0 means "not known" and maps to an
// unset optional (started_at, finished_at) or to the zero Timestamp
// (created_at, updated_at, which the store treats as unset). exit_code
// travels as has_exit_code + exit_code. The node is not part of a
// ContainerState: it is the stream's (AgentMessage.node), so FromProto takes
// it. Pure functions, no validation (the store validates what it writes).
#ifndef LENS_CONTAINER_EVENTS_CONVERT_H_
#define LENS_CONTAINER_EVENTS_CONVERT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "lens/containers.h"
#include "lens/model.h"
#include "lens/v1/container_events.pb.h"

namespace lens::container_events {

// Unix microseconds of `t` (0 for the zero Timestamp).
int64_t ToUnixMicros(Timestamp t);
Timestamp FromUnixMicros(int64_t us);

void ToProto(const ContainerDeviceRecord& device,
             lens::v1::ContainerDevice* out);
ContainerDeviceRecord FromProto(const lens::v1::ContainerDevice& device);

// `container.node` is not copied (see above). oom_killed is left false: a
// ContainerRecord does not know it; ToProto(ContainerChange) sets it.
void ToProto(const ContainerRecord& container, lens::v1::ContainerState* out);
// An unknown state or event type is kUnknown; an unknown device kind is
// kOther.
ContainerRecord FromProto(const lens::v1::ContainerState& state,
                          std::string_view node);

// The change's container state and event type and time; oom_killed is set
// for an "oom" event.
void ToProto(const ContainerChange& change, lens::v1::ContainerEvent* out);
// The event row and the container state of one ContainerEvent message.
// event.detail_json is "{}" or holds what the state adds about the event:
// {"exit_code":137,"oom_killed":true}.
ContainerChange FromProto(const lens::v1::ContainerEvent& event,
                          std::string_view node, uint64_t sequence);

}  // namespace lens::container_events

#endif  // LENS_CONTAINER_EVENTS_CONVERT_H_
