// lens-multicluster (docs/multicluster.md).
#ifndef LENS_MULTICLUSTER_SERVICE_H_
#define LENS_MULTICLUSTER_SERVICE_H_
#endif  // LENS_MULTICLUSTER_SERVICE_H_
