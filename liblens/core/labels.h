// Labels as JSON text: the form the store's labels columns carry. Labels
// stay a map everywhere else (the wire has a protobuf map).
#ifndef LENS_CORE_LABELS_H_
#define LENS_CORE_LABELS_H_

#include <optional>
#include <string>
#include <string_view>

#include "lens/model.h"

namespace lens {

// A JSON object of strings, keys in order, UTF-8 sanitised.
std::string LabelsToJson(const Labels& labels);
// The string members of a JSON object (other members skipped); "" is empty
// labels; nullopt for text that is not a JSON object.
std::optional<Labels> LabelsFromJson(std::string_view json);

}  // namespace lens

#endif  // LENS_CORE_LABELS_H_
