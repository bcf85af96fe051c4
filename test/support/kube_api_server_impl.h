// The state of KubeApiServer shared by its implementation files:
// kube_api_server.cc (objects, history, lifecycle), kube_api_server_http.cc
// (routing, authentication, fault injection, errors, discovery),
// kube_api_server_list.cc (selectors, scopes, paginated lists),
// kube_api_server_objects.cc (get and the write verbs) and
// kube_api_server_watch.cc (watch streams). Internal to the test support
// library.
#ifndef LENS_TEST_SUPPORT_KUBE_API_SERVER_IMPL_H_
#define LENS_TEST_SUPPORT_KUBE_API_SERVER_IMPL_H_

#include <httplib.h>
#include <rapidjson/document.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kube_api_server.h"

namespace lens::test::kube {

using Clock = std::chrono::steady_clock;

// One version of one object: immutable once made, shared by the store, the
// history and the watch queues.
struct StoredObject {
  std::string key;  // "<namespace>/<name>" or "<name>": etcd's key order
  std::string namespace_name;
  std::string name;
  uint64_t resource_version = 0;
  rapidjson::Document doc;
  std::string json;      // doc, serialised
  std::string metadata;  // doc["metadata"], serialised
};
using ObjectPtr = std::shared_ptr<const StoredObject>;

// Seals `doc` (an object with metadata) into a stored version.
ObjectPtr Seal(rapidjson::Document doc);
// The same object with metadata.resourceVersion set to `resource_version`.
ObjectPtr Restamp(const StoredObject& object, uint64_t resource_version);
std::string Serialize(const rapidjson::Value& value);

using Allocator = rapidjson::Document::AllocatorType;
// The string member `name` of `object`; "" when absent or not a string.
std::string StringMember(const rapidjson::Value& object, const char* name);
void SetString(rapidjson::Value& object, const char* name,
               std::string_view value, Allocator& alloc);
// The object member `name`, made (or made an object) when it is not one.
rapidjson::Value& MemberObject(rapidjson::Value& parent, const char* name,
                               Allocator& alloc);
// The string at a dotted path ("spec.nodeName"); "" when absent, numbers and
// booleans as text.
std::string FieldValue(const rapidjson::Value& doc, std::string_view path);

enum class EventType { kAdded, kModified, kDeleted };
const char* EventTypeName(EventType type);

struct Event {
  size_t type = 0;  // index into Impl::types_
  EventType event_type = EventType::kAdded;
  uint64_t resource_version = 0;
  ObjectPtr object;    // after the change; for deletions the last state
  ObjectPtr previous;  // before the change; null for additions
};
using EventPtr = std::shared_ptr<const Event>;

// A label or field selector requirement.
struct Requirement {
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kNotExists };
  std::string key;
  Op op = Op::kEquals;
  std::vector<std::string> values;
};

struct Selector {
  std::vector<Requirement> labels;
  std::vector<Requirement> fields;
  bool empty() const { return labels.empty() && fields.empty(); }
  bool Matches(const StoredObject& object) const;
};

// What a list or watch covers.
struct Scope {
  size_t type = 0;
  std::string namespace_name;  // "": every namespace
  std::string name;            // "": every name
  Selector selector;
  bool Contains(const StoredObject& object) const;
};

// An open watch: the events committed since it opened, waiting to be sent.
struct Watch {
  Scope scope;
  bool metadata_only = false;
  std::deque<EventPtr> queue;  // GUARDED_BY(Impl::mu_)
  bool closed = false;         // GUARDED_BY(Impl::mu_): end cleanly
};

// An answered watch: what is still to be written and when it ends.
struct WatchStream {
  std::shared_ptr<Watch> watch;  // null: `pending` is all there is to send
  std::string pending;
  size_t type = 0;
  bool metadata_only = false;
  bool bookmarks = false;
  uint64_t epoch = 0;
  Clock::time_point deadline;
  Clock::time_point last_write;
  int fd = -1;  // the connection's socket, to notice the client leaving
};

// A Status object (the body of every error answer).
struct StatusSpec {
  int code = 500;
  std::string reason;
  std::string message;
  std::string name;  // details, when set
  std::string group;
  std::string kind;
  int retry_after_seconds = 0;
  std::string continue_token;  // metadata.continue, when set
};
std::string StatusJson(const StatusSpec& status);

// A Status with `code`, its reason and (when "") a default message.
StatusSpec StatusOf(int code, std::string message = "");
// Answers with `body` as application/json.
void Answer(httplib::Response& res, int status, std::string body);
// Answers with a Status body, and Retry-After when it has a retry delay.
void AnswerStatus(httplib::Response& res, const StatusSpec& status);
// `text` as a JSON string literal.
std::string JsonQuote(std::string_view text);
// Go's strconv.ParseBool truths ("1", "t", "true", ...), as query flags.
bool ParseBool(std::string_view text);
// A whole decimal number; false when `text` is anything else.
bool ParseUint(std::string_view text, uint64_t* value);

// Whether an Accept header asks for PartialObjectMetadata[List] (its first
// media range that the server can answer does).
bool WantsMetadataOnly(std::string_view accept);

// Parses a labelSelector (`labels`: =, ==, !=, in, notin, key, !key) or a
// fieldSelector (=, ==, !=) into `out`; "" when valid, otherwise why not.
std::string ParseSelector(std::string_view text, bool labels,
                          std::vector<Requirement>* out);

// Where a request points, from its path.
struct Target {
  enum class Kind {
    kUnknown,
    kVersions,      // /api
    kGroupList,     // /apis
    kGroup,         // /apis/<g>
    kResourceList,  // /api/v1, /apis/<g>/<v>
    kCollection,
    kObject,
  };
  Kind kind = Kind::kUnknown;
  std::string group;
  std::string version;
  std::string resource;
  size_t type = 0;          // for kCollection and kObject
  bool namespaced = false;  // of the type
  std::string namespace_name;
  std::string name;
};

// The outcome of a change to the store.
enum class Outcome { kOk, kUnchanged, kExists, kNotFound, kConflict, kInvalid };

struct ChangeResult {
  Outcome outcome = Outcome::kOk;
  ObjectPtr object;     // the stored (or deleted) object
  std::string message;  // why, for kConflict and kInvalid
};

}  // namespace lens::test::kube

namespace lens::test {

struct KubeApiServer::Impl {
  explicit Impl(KubeApiServerOptions options);
  ~Impl();

  // kube_api_server.cc: types and objects.
  void AddType(const KubeResourceType& type);
  // The type serving `api_version` ("apps/v1", "v1") and `kind`, or -1.
  int FindKind(std::string_view api_version, std::string_view kind) const;
  int FindResource(std::string_view group, std::string_view version,
                   std::string_view resource) const;
  std::string ApiVersion(size_t type) const;
  // Parses an object and finds its type; -1 when either fails.
  int ParseObject(const std::string& json, rapidjson::Document* doc) const;
  // `server_fields`: assign uid and creationTimestamp even when set.
  kube::ChangeResult CreateLocked(size_t type, rapidjson::Document doc,
                                  bool server_fields);
  // `expected_version`: "" for an unconditional update. `skip_unchanged`: an
  // update that changes nothing keeps the object as it is (no event).
  kube::ChangeResult UpdateLocked(size_t type, rapidjson::Document doc,
                                  std::string_view expected_version,
                                  bool skip_unchanged);
  kube::ChangeResult DeleteLocked(size_t type, const std::string& key,
                                  std::string_view expected_version,
                                  std::string_view expected_uid);
  std::string KeyOf(size_t type, std::string_view namespace_name,
                    std::string_view name) const;
  // The type's objects as they were at `resource_version` (which must not be
  // older than history_start_).
  std::map<std::string, kube::ObjectPtr> SnapshotLocked(
      size_t type, uint64_t resource_version) const;
  void CommitLocked(size_t type, kube::EventType event_type,
                    kube::ObjectPtr object, kube::ObjectPtr previous);

  // kube_api_server.cc: serving.
  bool StartServing();
  void StopServing();

  // kube_api_server_http.cc; ServeList in kube_api_server_list.cc, ServeGet
  // to ServeDelete and AnswerChange in kube_api_server_objects.cc.
  void Serve(const httplib::Request& req, httplib::Response& res);
  void ServeParsed(const httplib::Request& req, httplib::Response& res,
                   const kube::Target& target, const std::string& verb);
  void ServeDiscovery(const kube::Target& target, httplib::Response& res);
  void ServeList(const httplib::Request& req, httplib::Response& res,
                 const kube::Target& target, const kube::Selector& selector);
  void ServeGet(const httplib::Request& req, httplib::Response& res,
                const kube::Target& target);
  void ServeCreate(const httplib::Request& req, httplib::Response& res,
                   const kube::Target& target);
  void ServeUpdate(const httplib::Request& req, httplib::Response& res,
                   const kube::Target& target, bool patch);
  void ServeDelete(const httplib::Request& req, httplib::Response& res,
                   const kube::Target& target);
  kube::Target ParsePath(const std::string& path) const;
  // Answers with an injected failure's Status body when one applies to
  // `path` (and uses it up); whether one did.
  bool TakeFailure(const std::string& path, httplib::Response& res);
  void AnswerChange(const kube::ChangeResult& result,
                    const kube::Target& target, const std::string& name,
                    int ok_status, bool metadata_only, httplib::Response& res);

  // kube_api_server_watch.cc.
  void ServeWatch(const httplib::Request& req, httplib::Response& res,
                  const kube::Target& target, kube::Selector selector);
  // The event line a watch sends for `event` ("" when out of its scope).
  std::string RenderEvent(const kube::Watch& watch,
                          const kube::Event& event) const;
  std::string ObjectJson(const kube::StoredObject& object,
                         bool metadata_only) const;
  // Writes what `stream` has to send next, waiting for it; false drops the
  // connection (server stopped, client gone).
  bool PumpWatch(kube::WatchStream& stream, httplib::DataSink& sink);
  std::string BookmarkLine(const kube::WatchStream& stream,
                           bool initial_events_end) const;
  void CloseAllWatchesLocked();

  const KubeApiServerOptions options_;

  mutable std::mutex mu_;
  // Signalled on every commit, closed watch and stop.
  std::condition_variable changed_;

  std::vector<KubeResourceType> types_;  // GUARDED_BY(mu_)
  std::vector<std::map<std::string, kube::ObjectPtr>>
      objects_;                         // GUARDED_BY(mu_)
  uint64_t resource_version_ = 1;       // GUARDED_BY(mu_)
  std::deque<kube::EventPtr> history_;  // GUARDED_BY(mu_)
  // Every event after this resourceVersion is in history_.
  uint64_t history_start_ = 1;                      // GUARDED_BY(mu_)
  std::set<std::shared_ptr<kube::Watch>> watches_;  // GUARDED_BY(mu_)
  std::vector<KubeRequest> requests_;               // GUARDED_BY(mu_)
  uint64_t requests_cleared_ = 0;  // ClearRequests calls; GUARDED_BY(mu_)
  struct Failure {
    std::string path_part;
    int status = 0;
    int count = 0;
    std::string body;  // instead of a Status, when set
  };
  std::vector<Failure> failures_;  // GUARDED_BY(mu_)
  std::mt19937_64 rng_;            // GUARDED_BY(mu_)

  // Serving; Start/Stop come from the owner's thread only.
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
  int port_ = 0;          // GUARDED_BY(mu_); kept across restarts
  bool serving_ = false;  // GUARDED_BY(mu_)
  // Bumped by every stop: a stream from an earlier epoch drops its
  // connection.
  uint64_t epoch_ = 0;  // GUARDED_BY(mu_)
  std::string error_;   // GUARDED_BY(mu_)
};

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_KUBE_API_SERVER_IMPL_H_
