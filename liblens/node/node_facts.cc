#include "lens/node.h"
