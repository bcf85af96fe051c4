#!/bin/sh
# make-node-certs.sh: the TLS of the node daemons' HTTP ports (docs/deploy.md, "TLS on the node
# ports"). Makes a CA and one server certificate that lens-node-agent, lens-netflow and
# lens-tuner serve; clients (lens-jobs, vmagent, Prometheus) verify the chain against the CA and
# the certificate against a fixed name, never against the pod or node IP they connect to.
#
#   scripts/make-node-certs.sh [--days N] [--name DNS]... [--apply] DIR
#
# Writes into DIR (created, mode 0700): ca.crt, ca.key (keep it offline: it signs the next
# certificate), tls.crt, tls.key. With --apply, also creates or replaces the Secrets with
# kubectl (the namespaces must exist):
#   lens-node/lens-node-tls  ca.crt tls.crt tls.key   (the node daemons)
#   lens/lens-node-ca        ca.crt                    (lens-jobs, lens-vmagent)
# An existing ca.key in DIR is reused, so a renewal keeps the CA that clients already trust.
#
# The certificate names (subjectAltName) the node daemons' Services in lens-node; --name adds
# one (repeatable). Keys are ECDSA P-256; the server certificate is valid --days days (397).
set -eu

days=397
apply=0
names="lens-node-agent.lens-node.svc lens-netflow.lens-node.svc lens-tuner.lens-node.svc"
usage() {
  echo "usage: $0 [--days N] [--name DNS]... [--apply] DIR" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --days) [ $# -ge 2 ] || usage; days=$2; shift 2 ;;
    --name) [ $# -ge 2 ] || usage; names="$names $2"; shift 2 ;;
    --apply) apply=1; shift ;;
    -h|--help) usage ;;
    -*) echo "$0: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || usage
dir=$1
case "$days" in
  ''|*[!0-9]*) echo "$0: --days wants a number of days, not \"$days\"" >&2; exit 2 ;;
esac
command -v openssl >/dev/null || { echo "$0: openssl not found" >&2; exit 1; }

umask 077
mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"

san=""
for n in $names; do
  case "$n" in
    *[!a-z0-9.-]*|'') echo "$0: \"$n\" is not a DNS name" >&2; exit 2 ;;
  esac
  san="${san:+$san,}DNS:$n"
done

if [ ! -s ca.key ]; then
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca.key
  rm -f ca.crt
fi
if [ ! -s ca.crt ]; then
  openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=lens-node-ca" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" -out ca.crt
fi

cat > server.ext <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=$san
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
EOF
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out tls.key
openssl req -new -key tls.key -subj "/CN=lens-node-agent.lens-node.svc" -out server.csr
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 \
  -days "$days" -extfile server.ext -out tls.crt 2>/dev/null
rm -f server.csr server.ext
openssl verify -CAfile ca.crt tls.crt >/dev/null

echo "$dir: ca.crt tls.crt tls.key for $(echo "$san" | sed 's/DNS://g')"
if [ "$apply" = 1 ]; then
  kubectl -n lens-node create secret generic lens-node-tls \
    --from-file=ca.crt --from-file=tls.crt --from-file=tls.key \
    --dry-run=client -o yaml | kubectl apply -f -
  kubectl -n lens create secret generic lens-node-ca --from-file=ca.crt \
    --dry-run=client -o yaml | kubectl apply -f -
fi
