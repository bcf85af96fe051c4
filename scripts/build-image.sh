#!/usr/bin/env bash
# Builds deploy/Dockerfile's runtime image without a container registry: the base is a Debian
# bookworm root file system made by mmdebstrap from Debian's mirrors (the packages the
# Dockerfile's runtime stage installs), the daemons come from a staged `cmake --install`, and
# buildah writes an OCI archive. Then every daemon is started from the image under podman + runc
# (--version, then /healthz on 127.0.0.1 with the host network). Root only (mmdebstrap, runc).
#
#   scripts/build-image.sh STAGE OUT.tar [TAG]
#     STAGE   a DESTDIR install tree (STAGE/usr/bin/lens-*, STAGE/usr/libexec/lens/lens-platform)
#     OUT.tar the OCI archive (`podman load -i`, `skopeo copy oci-archive:OUT.tar docker://...`)
# Env: IMAGE_WORK (scratch dir, default OUT.tar's dir/image-work), STORAGE_DRIVER (overlay; vfs
# where the work dir is itself on overlayfs), SMOKE=0 skips the run check, SMOKE_PORT (first port),
# SOURCE_DATE_EPOCH. Clean: podman --root W/storage --runroot W/run system reset -f; rm -rf W
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
stage=$(realpath "$1"); out=$(realpath -m "$2"); tag=${3:-ghcr.io/lens-observability/lens:0.1.0}
dockerfile=${DOCKERFILE:-$root/deploy/Dockerfile}
work=${IMAGE_WORK:-$(dirname "$out")/image-work}
mkdir -p "$work"
store=(--root "$work/storage" --runroot "$work/run" --storage-driver "${STORAGE_DRIVER:-overlay}")
# SOURCE_DATE_EPOCH (e.g. the last commit's time) makes the rootfs and the layers reproducible.
stamp=(); [ -z "${SOURCE_DATE_EPOCH:-}" ] || stamp=(--timestamp "$SOURCE_DATE_EPOCH")
t() { printf '== %-28s %4ss\n' "$1" $(( $(date +%s) - start )); start=$(date +%s); }
start=$(date +%s)

# 1. What the Dockerfile's runtime stage (the FROM without " AS ") installs, USER and ENTRYPOINT:
# the same parse as test/deploy/image_test.cc's RuntimePackages.
final() { awk '/^FROM /{rt=($0 !~ / AS /); next} rt' "$dockerfile"; }
packages=$(final | awk '/apt-get install/{i=1} i && /^[ \t]+[a-z0-9][a-z0-9.+-]+ \\$/{print $1}
                        i && /&&/ && !/apt-get install/{i=0}' | paste -sd,)
user=$(final | sed -n 's/^USER //p'); entrypoint=$(final | sed -n 's/^ENTRYPOINT //p')
[ -n "$packages" ] && [ -n "$entrypoint" ] || { echo "build-image: cannot parse $dockerfile" >&2; exit 1; }

# 2. The base root file system, rebuilt only when the package list changes. "essential" + the
# merged-usr hook: no apt, no usrmerge/perl (bookworm-slim's doc exclusions, copyrights kept).
rootfs=$work/rootfs-$(echo "$packages" | sha256sum | cut -c1-12).tar
if [ ! -s "$rootfs" ]; then
  mmdebstrap --format=tar --variant=essential --include="$packages" \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --customize-hook=': >"$1/etc/hostname"; : >"$1/etc/resolv.conf"' \
    bookworm "$rootfs.part" /etc/apt/sources.list.d/debian.sources \
    >"$work/mmdebstrap.log" 2>&1 || { tail -30 "$work/mmdebstrap.log" >&2; exit 1; }  # host's mirrors
  mv "$rootfs.part" "$rootfs"; t "mmdebstrap ($(du -m "$rootfs" | cut -f1) MiB)"
fi

# 3. Base layer + one layer with the install tree (the Dockerfile's COPY --from=build /out/usr/).
buildah "${store[@]}" rm --all >/dev/null
base=$(buildah "${store[@]}" from scratch)
buildah "${store[@]}" add --quiet "$base" "$rootfs" / >/dev/null
buildah "${store[@]}" commit --quiet --rm "${stamp[@]}" "$base" localhost/lens-base:bookworm >/dev/null
ctr=$(buildah "${store[@]}" from --pull-never localhost/lens-base:bookworm)
buildah "${store[@]}" copy "$ctr" "$stage/usr" /usr >/dev/null
buildah "${store[@]}" config --user "$user" --entrypoint "$entrypoint" \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --label org.opencontainers.image.version="${tag##*:}" "$ctr"
rm -f "$out"
buildah "${store[@]}" commit --quiet --rm "${stamp[@]}" "$ctr" "oci-archive:$out:$tag" >/dev/null
buildah "${store[@]}" rmi --prune >/dev/null 2>&1 || true   # the previous run's image
t "image ($(du -m "$out" | cut -f1) MiB)"
[ "${SMOKE:-1}" = 0 ] && exit 0

# 4. Each daemon from the image: --version, then /healthz. runc, not crun (crun 1.8 refuses a
# cgroup v1/v2 hybrid host); rlimits at most podman's own (no CAP_SYS_RESOURCE in a sandbox).
podman=(podman "${store[@]}" --runtime runc)
"${podman[@]}" load --quiet -i "$out" >/dev/null; "${podman[@]}" image prune -f >/dev/null
run=(--network=host --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096
     --read-only --cap-drop=all --security-opt no-new-privileges -e ASAN_OPTIONS=detect_leaks=0)
# lens-controller and lens-multicluster need an API server to start; /healthz answers without one.
printf '%s\n' 'apiVersion: v1' 'kind: Config' 'current-context: none' \
  'clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]' \
  'users: [{name: none, user: {token: none}}]' \
  'contexts: [{name: none, context: {cluster: none, user: none}}]' >"$work/kubeconfig"
port=${SMOKE_PORT:-39180}; failed=0; ids=()
trap '[ ${#ids[@]} -eq 0 ] || "${podman[@]}" rm -f -t 0 "${ids[@]}" >/dev/null 2>&1' EXIT
for d in lens-node-agent lens-netflow lens-tuner lens-controller lens-jobs lens-telemetry \
         lens-api lens-multicluster; do
  port=$((port + 1))
  version=$("${podman[@]}" run --rm "${run[@]}" --entrypoint "/usr/bin/$d" "$tag" --version 2>&1) || {
    echo "FAIL $d --version: $version"; failed=1; continue; }
  args=(--listen "127.0.0.1:$port"); sec=()
  case $d in  # deploy/base's securityContext: the node daemons run as root
    lens-netflow) sec=(--user 0 --cap-add BPF,PERFMON,SYS_RESOURCE --security-opt seccomp=unconfined) ;;
    lens-node-agent|lens-tuner) sec=(--user 0) ;;
    lens-jobs) args=(--listen-http "127.0.0.1:$port" --listen-grpc 127.0.0.1:0) ;;
  esac
  case $d in lens-controller|lens-multicluster)
    sec+=(-v "$work/kubeconfig:/etc/lens/kubeconfig:ro"); args+=(--kubeconfig /etc/lens/kubeconfig) ;; esac
  case $d in lens-controller|lens-jobs|lens-telemetry|lens-api)
    args+=(--database sqlite:///tmp/lens.db) ;; esac
  id=$("${podman[@]}" run -d "${run[@]}" "${sec[@]}" --tmpfs /tmp --entrypoint "/usr/bin/$d" \
       "$tag" "${args[@]}"); ids=("$id"); code=000
  for _ in $(seq 50); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz" || true)
    [ "$code" = 200 ] && break; sleep 0.2
  done
  if [ "$code" = 200 ]; then echo "ok   $d $version /healthz 200"
  else echo "FAIL $d $version /healthz $code:"; "${podman[@]}" logs "$id" 2>&1 | tail -5 || true; failed=1; fi
  "${podman[@]}" rm -f -t 0 "$id" >/dev/null; ids=()
done
t smoke
exit $failed
