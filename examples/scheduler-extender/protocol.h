// The kube-scheduler extender protocol (k8s.io/kube-scheduler/extender/v1):
// ExtenderArgs in, ExtenderFilterResult or HostPriorityList out, as JSON.
#ifndef LENS_EXAMPLES_SCHEDULER_EXTENDER_PROTOCOL_H_
#define LENS_EXAMPLES_SCHEDULER_EXTENDER_PROTOCOL_H_

#include <functional>
#include <string>
#include <string_view>

#include "lens/status.h"
#include "policy.h"

namespace extender {

// Answers one request body; `judge` gives a node's verdict and score.
// InvalidArgument (the scheduler gets the message in `error` or a 400)
// for a body that is not an ExtenderArgs: not JSON, no `pod`, neither
// `nodes` nor `nodenames`, a GPU quantity that is not a whole number.
struct NodeJudge {
  std::function<Verdict(const PodRequest&, const std::string& node)> filter;
  std::function<int64_t(const PodRequest&, const std::string& node)> score;
};
lens::StatusOr<std::string> AnswerFilter(std::string_view body,
                                         const NodeJudge& judge);
lens::StatusOr<std::string> AnswerPrioritize(std::string_view body,
                                             const NodeJudge& judge);

}  // namespace extender

#endif  // LENS_EXAMPLES_SCHEDULER_EXTENDER_PROTOCOL_H_
