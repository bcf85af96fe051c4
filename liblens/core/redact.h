// One redactor for every message and log line that names a database or any
// other URL that may carry credentials.
#ifndef LENS_CORE_REDACT_H_
#define LENS_CORE_REDACT_H_

#include <string>
#include <string_view>

namespace lens {

// `url` as it may be shown: the password of "scheme://user:password@host"
// (found even when badly encoded: everything from the first ':' after the
// scheme to the last '@' before the query), and the values of `password`
// and `sslpassword` parameters, in a URL query or in libpq's keyword form
// ("host=db password='a b'"), become "***". Everything else, `passfile`
// paths included, is kept.
std::string RedactCredentials(std::string_view url);

// `url` without its user information ("user:password@") and its query or
// fragment (where tokens hide): "https://u:p@vm:8428/w?token=X#y" ->
// "https://vm:8428/w". For messages, labels and names that name a server
// (remote-write targets, PromQL servers) and must never carry credentials.
std::string RedactedUrl(std::string_view url);

}  // namespace lens

#endif  // LENS_CORE_REDACT_H_
