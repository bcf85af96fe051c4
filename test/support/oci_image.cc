#include "oci_image.h"

#include <sys/utsname.h>

#include <filesystem>
#include <system_error>

#include "command.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;

// Linked to busybox in the image's /bin.
constexpr const char* kApplets[] = {"sh",   "sleep", "true", "cat", "head",
                                    "tail", "dd",    "echo", "ls",  "nc"};

// The OCI image layout documents (image-spec v1.0) of the busybox image.
constexpr char kImageConfig[] =
    R"({"architecture":"@ARCH@","os":"linux","config":{"Cmd":["/bin/sh"],)"
    R"("Env":["PATH=/bin"]},"rootfs":{"type":"layers","diff_ids":["@LAYER@"]}})";
constexpr char kManifest[] =
    R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
    R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json",)"
    R"("digest":"@CONFIG@","size":@CONFIG_SIZE@},)"
    R"("layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar",)"
    R"("digest":"@LAYER@","size":@LAYER_SIZE@}]})";
constexpr char kIndex[] =
    R"({"schemaVersion":2,"manifests":[{)"
    R"("mediaType":"application/vnd.oci.image.manifest.v1+json",)"
    R"("digest":"@MANIFEST@","size":@MANIFEST_SIZE@,)"
    R"("annotations":{"org.opencontainers.image.ref.name":"@REF@"},)"
    R"("platform":{"architecture":"@ARCH@","os":"linux"}}]})";

// The OCI name of this machine's architecture.
std::string Arch() {
  utsname u{};
  ::uname(&u);
  return std::string(u.machine) == "aarch64" ? "arm64" : "amd64";
}

struct Blob {
  std::string digest;  // sha256:<hex>
  std::string size_bytes;
};

// Moves `file` into the OCI layout `oci`, named by its digest.
StatusOr<Blob> AddBlob(const std::string& oci, const std::string& file) {
  LENS_ASSIGN_OR_RETURN(std::string sum, RunChecked({"sha256sum", file}));
  const std::string hex = sum.substr(0, sum.find(' '));
  if (hex.size() != 64) return InternalError("sha256sum " + file + ": " + sum);
  std::error_code ec;
  Blob blob{"sha256:" + hex, std::to_string(fs::file_size(file, ec))};
  if (!ec) fs::rename(file, oci + "/blobs/sha256/" + hex, ec);
  if (ec) return InternalError("add blob " + file + ": " + ec.message());
  return blob;
}

}  // namespace

StatusOr<std::string> BuildBusyboxArchive(const std::string& work,
                                          const std::string& ref) {
  const std::string rootfs = work + "/rootfs", oci = work + "/oci";
  std::error_code ec;
  for (const char* d : {"/rootfs/bin", "/rootfs/dev", "/rootfs/proc",
                        "/rootfs/sys", "/rootfs/tmp", "/oci/blobs/sha256"}) {
    fs::create_directories(work + d, ec);
  }
  fs::copy_file("/bin/busybox", rootfs + "/bin/busybox", ec);
  for (const char* applet : kApplets) {
    if (!ec) fs::create_symlink("busybox", rootfs + "/bin/" + applet, ec);
  }
  if (ec) return InternalError("stage " + rootfs + ": " + ec.message());
  // Uncompressed, so the layer's digest is also its diff_id.
  LENS_RETURN_IF_ERROR(
      RunChecked({"tar", "--numeric-owner", "--owner=0", "--group=0", "-C",
                  rootfs, "-cf", work + "/layer", "."})
          .status());
  LENS_ASSIGN_OR_RETURN(Blob layer, AddBlob(oci, work + "/layer"));
  LENS_RETURN_IF_ERROR(WriteFile(
      work + "/config",
      Fill(kImageConfig, {{"@LAYER@", layer.digest}, {"@ARCH@", Arch()}})));
  LENS_ASSIGN_OR_RETURN(Blob config, AddBlob(oci, work + "/config"));
  LENS_RETURN_IF_ERROR(
      WriteFile(work + "/manifest",
                Fill(kManifest, {{"@CONFIG@", config.digest},
                                 {"@CONFIG_SIZE@", config.size_bytes},
                                 {"@LAYER@", layer.digest},
                                 {"@LAYER_SIZE@", layer.size_bytes}})));
  LENS_ASSIGN_OR_RETURN(Blob manifest, AddBlob(oci, work + "/manifest"));
  LENS_RETURN_IF_ERROR(
      WriteFile(oci + "/index.json",
                Fill(kIndex, {{"@MANIFEST@", manifest.digest},
                              {"@MANIFEST_SIZE@", manifest.size_bytes},
                              {"@REF@", ref},
                              {"@ARCH@", Arch()}})));
  LENS_RETURN_IF_ERROR(
      WriteFile(oci + "/oci-layout", R"({"imageLayoutVersion":"1.0.0"})"));
  const std::string archive = work + "/image.tar";
  LENS_RETURN_IF_ERROR(RunChecked({"tar", "-C", oci, "-cf", archive,
                                   "oci-layout", "index.json", "blobs"})
                           .status());
  return archive;
}

}  // namespace lens::test
