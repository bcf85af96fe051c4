// What the deployed-manifest tests share: waiting, and the check that a
// component's RBAC in the rendered manifests is exactly what it asks of its
// test API server (every request allowed, every rule item used).
#ifndef LENS_TEST_DEPLOY_MANIFEST_RBAC_H_
#define LENS_TEST_DEPLOY_MANIFEST_RBAC_H_

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "manifest_cluster.h"

namespace lens::test {

using Clock = std::chrono::steady_clock;
using rapidjson::Value;

inline bool WaitUntil(const std::function<bool()>& done,
                      std::chrono::seconds timeout = std::chrono::seconds(30)) {
  const auto end = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

// One rule item: (namespace or "" for cluster-wide, group, resource, verb,
// resource name or "" for any).
using Grant =
    std::tuple<std::string, std::string, std::string, std::string, std::string>;

// What the manifests let a service account do: its Roles in their
// namespaces, its ClusterRoles everywhere, each item with where it came from.
inline std::map<Grant, std::string> Grants(const Rendered& r,
                                           const std::string& ns,
                                           const std::string& account) {
  std::map<Grant, std::string> out;
  for (const char* kind : {"RoleBinding", "ClusterRoleBinding"}) {
    for (const Value* b : OfKind(r, kind)) {
      bool bound = false;
      for (const auto& s : (*b)["subjects"].GetArray()) {
        bound |= Str(s, "/kind") == "ServiceAccount" &&
                 Str(s, "/name") == account && Str(s, "/namespace") == ns;
      }
      if (!bound) continue;
      const std::string role_kind = Str(*b, "/roleRef/kind");
      const std::string scope =
          role_kind == "Role" ? Str(*b, "/metadata/namespace") : "";
      const Value* role = Find(r, role_kind, scope, Str(*b, "/roleRef/name"));
      EXPECT_NE(role, nullptr) << Describe(*b) << ": no role";
      if (!role) continue;
      for (const auto& rule : (*role)["rules"].GetArray()) {
        std::vector<std::string> names = {""};
        if (rule.HasMember("resourceNames")) {
          names.clear();
          for (const auto& n : rule["resourceNames"].GetArray()) {
            names.push_back(n.GetString());
          }
        }
        for (const auto& g : rule["apiGroups"].GetArray()) {
          for (const auto& res : rule["resources"].GetArray()) {
            for (const auto& v : rule["verbs"].GetArray()) {
              for (const std::string& n : names) {
                out[{scope, g.GetString(), res.GetString(), v.GetString(), n}] =
                    Describe(*role);
              }
            }
          }
        }
      }
    }
  }
  return out;
}

// The object a request is about: its name, or for a list or watch the
// `metadata.name=` of its field selector (which resourceNames then honour).
inline std::string RequestName(const KubeRequest& r) {
  if (!r.name.empty()) return r.name;
  const std::string key = "fieldSelector=metadata.name%3D";
  const size_t at = r.query.find(key);
  if (at == std::string::npos) return "";
  const size_t start = at + key.size();
  return r.query.substr(start, r.query.find('&', start) - start);
}

// The grant that allows `r`, or null.
inline const Grant* Allowing(const std::map<Grant, std::string>& grants,
                             const KubeRequest& r) {
  for (const auto& [g, from] : grants) {
    const auto& [scope, group, resource, verb, name] = g;
    if (group == r.group && resource == r.resource && verb == r.verb &&
        (scope.empty() || scope == r.namespace_name) &&
        (name.empty() || name == RequestName(r))) {
      return &g;
    }
  }
  return nullptr;
}

// Every request of `c` is allowed by its grants and every grant is used
// (waiting up to `wait` for the last of them).
inline void ExpectRbacIsExact(const Rendered& rendered, DeployedContainer& c,
                              std::chrono::seconds wait) {
  const auto grants = Grants(rendered, c.namespace_name, c.service_account);
  ASSERT_FALSE(grants.empty()) << c.workload;
  std::set<Grant> used;
  const bool all_used = WaitUntil(
      [&] {
        for (const KubeRequest& r : c.api->Requests()) {
          if (const Grant* g = Allowing(grants, r)) used.insert(*g);
        }
        return used.size() == grants.size();
      },
      wait);
  for (const auto& [g, from] : grants) {
    const auto& [scope, group, resource, verb, name] = g;
    EXPECT_TRUE(used.count(g))
        << c.workload << ": " << from << " grants " << verb << " on " << group
        << "/" << resource << (name.empty() ? "" : " " + name) << " (" << scope
        << ") which it never asked for";
  }
  EXPECT_TRUE(all_used) << c.workload;
  for (const KubeRequest& r : c.api->Requests()) {
    if (r.verb == "discovery") continue;  // system:discovery, every account
    EXPECT_NE(Allowing(grants, r), nullptr)
        << c.workload << " asked " << r.verb << " " << r.group << "/"
        << r.resource << " " << RequestName(r) << " in \"" << r.namespace_name
        << "\" (" << r.method << " " << r.path << "?" << r.query
        << "), which its RBAC does not allow";
    EXPECT_NE(r.status, 401) << c.workload << ": " << r.path;
  }
}

}  // namespace lens::test

#endif  // LENS_TEST_DEPLOY_MANIFEST_RBAC_H_
