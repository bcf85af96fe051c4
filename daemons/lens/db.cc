// `lens db migrate --url URL` and `lens db status --url URL [--json]`.
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include "commands.h"
#include "core/json.h"
#include "lens/store.h"

namespace lens::cli {
namespace {

struct DbOptions {
  std::string url;
  bool json = false;
};

void Print(const SchemaStatus& s, bool json) {
  if (json) {
    JsonWriter w;
    w.StartObject();
    w.Member("backend", s.backend);
    w.Member("target", s.target);
    w.Member("current_version", s.current_version);
    w.Member("latest_version", s.latest_version);
    w.Key("migrations");
    w.StartArray();
    for (const MigrationInfo& m : s.migrations) {
      w.StartObject();
      w.Member("version", m.version);
      w.Member("name", m.name);
      w.Member("applied", m.applied);
      if (m.applied_at) {
        w.Member("applied_at",
                 int64_t{std::chrono::duration_cast<std::chrono::seconds>(
                             m.applied_at->time_since_epoch())
                             .count()});
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    std::string out = w.Take();
    out += '\n';
    std::fputs(out.c_str(), stdout);
    return;
  }
  std::printf("%s\nschema version %d of %d%s\n", s.target.c_str(),
              s.current_version, s.latest_version,
              s.current_version == s.latest_version ? " (up to date)"
                                                    : " (migrations pending)");
  for (const MigrationInfo& m : s.migrations) {
    std::printf("  %3d  %-8s %-22s %s\n", m.version,
                m.applied ? "applied" : "pending",
                FormatTime(m.applied_at).c_str(), m.name.c_str());
  }
}

int Run(const DbOptions& opt, bool migrate) {
  StoreOptions so;
  so.migrate = false;
  so.max_connections = 1;
  so.create_if_missing = migrate;  // status never creates a database
  auto store = Store::Open(opt.url, so);
  StatusOr<SchemaStatus> status =
      store.ok() ? (migrate ? (*store)->Migrate() : (*store)->GetSchemaStatus())
                 : StatusOr<SchemaStatus>(store.status());
  if (!status.ok()) {
    std::fprintf(stderr, "lens db %s: %s\n", migrate ? "migrate" : "status",
                 status.status().message().c_str());
    return 1;
  }
  Print(*status, opt.json);
  return 0;
}

}  // namespace

std::string FormatTime(const std::optional<Timestamp>& t) {
  if (!t || t->time_since_epoch().count() <= 0) return "-";
  const std::time_t secs =
      std::chrono::duration_cast<std::chrono::seconds>(t->time_since_epoch())
          .count();
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Command AddDb(CLI::App& app) {
  auto opt = std::make_shared<DbOptions>();
  CLI::App* db = app.add_subcommand("db", "Manage the Lens store's schema");
  db->require_subcommand(1);
  CLI::App* migrate = db->add_subcommand(
      "migrate", "Apply pending schema migrations (safe to run concurrently)");
  CLI::App* status =
      db->add_subcommand("status", "Show the applied and pending migrations");
  for (CLI::App* cmd : {migrate, status}) {
    cmd->add_option("--url", opt->url,
                    "sqlite:///path/lens.db or "
                    "postgresql://user:password@host:5432/db")
        ->required()
        ->envname("LENS_STORE_URL");
    cmd->add_flag("--json", opt->json, "Print JSON");
  }
  return [opt, migrate] { return Run(*opt, migrate->parsed()); };
}

}  // namespace lens::cli
