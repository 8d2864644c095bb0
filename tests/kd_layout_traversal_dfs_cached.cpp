// kd-tree traversal for the depth-first layout with the block cache.
#define TS_KD_LAYOUT_BLOCKED 0
#define TS_KD_BLOCK_SLOTS 4
#define TS_KD_NODE_CACHE 1
#define KD_LAYOUT_TRAVERSAL kDfsCachedTraversal
#include "tests/kd_layout_traversal_impl.h"
