// The classification step shared by FlowMonitor and WatchFlows: the remote
// end's class and the connection's direction.
#ifndef LENS_FLOW_CLASSIFY_H_
#define LENS_FLOW_CLASSIFY_H_

#include "lens/flow.h"

namespace lens::flow {

// Direction: an observed connect is egress and an accept ingress; a
// connection older than the probes is ingress when its local end is a
// listening socket of this host (`listeners` may be null: unknown).
inline void ClassifyFlow(const FlowClassifier& classifier,
                         const ListeningSockets* listeners, TcpFlow* flow) {
  flow->remote_class = classifier.Classify(flow->daddr);
  switch (flow->role) {
    case FlowRole::kActive:
      flow->direction = FlowDirection::kEgress;
      break;
    case FlowRole::kPassive:
      flow->direction = FlowDirection::kIngress;
      break;
    case FlowRole::kUnknown:
      flow->direction = listeners
                            ? listeners->DirectionOf(flow->saddr, flow->sport)
                            : FlowDirection::kUnknown;
  }
}

}  // namespace lens::flow

#endif  // LENS_FLOW_CLASSIFY_H_
