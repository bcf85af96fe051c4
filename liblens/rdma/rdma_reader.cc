#include "lens/rdma.h"
