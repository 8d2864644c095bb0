// kd-tree traversal for the blocked layout, 32-byte blocks, with the block cache.
#define TS_KD_LAYOUT_BLOCKED 1
#define TS_KD_BLOCK_SLOTS 4
#define TS_KD_NODE_CACHE 1
#define KD_LAYOUT_TRAVERSAL kBlocked4Traversal
#include "tests/kd_layout_traversal_impl.h"
