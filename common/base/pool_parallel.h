#pragma once
// Runs body(i) for every i in [0, count) on a TaskPool's threads and the calling thread together,
// and returns when all are done. The caller claims items too, so it never waits on a pool whose
// threads are all busy (even when it runs on that pool itself): a helper task that starts after
// every item is claimed just returns. The first exception a body throws is rethrown here.
#include <cstddef>
#include <functional>

#include "common/base/task_pool.h"

namespace tessera {

void run_on_pool(TaskPool& pool, size_t count, const std::function<void(size_t)>& body);

}  // namespace tessera
