// lens-multicluster (docs/multicluster.md).
#ifndef LENS_MULTICLUSTER_H_
#define LENS_MULTICLUSTER_H_
#endif  // LENS_MULTICLUSTER_H_
