#include "scene-packer/kdtree_sah.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

#include "scene-packer/kdtree_clip.h"

namespace tessera::pack::kd {
namespace {

// An event is one 64-bit key: position (as an order-preserving integer) | type | triangle, so
// sorting the integers sorts by position, then end < planar < start (the order the sweep needs),
// then triangle, which makes every sort fully deterministic.
using Event = uint64_t;
constexpr uint32_t kEnd = 0, kPlanar = 1, kStart = 2;
constexpr uint32_t kTriangleBits = 30;
constexpr uint32_t kTriangleMask = (1u << kTriangleBits) - 1;

uint32_t float_key(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f + 0.0f);  // -0 becomes +0: equal positions, equal keys
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
float key_float(uint32_t k) { return std::bit_cast<float>((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k); }
Event make_event(float pos, uint32_t type, uint32_t tri) {
  return (uint64_t(float_key(pos)) << 32) | (uint64_t(type) << kTriangleBits) | tri;
}
uint32_t event_key(Event e) { return uint32_t(e >> 32); }
uint32_t event_type(Event e) { return uint32_t(e >> kTriangleBits) & 3u; }
uint32_t event_tri(Event e) { return uint32_t(e) & kTriangleMask; }

struct EventList {
  std::vector<Event> events;      // axis 0, then axis 1, then axis 2; each run sorted
  std::array<size_t, 4> begin{};  // axis a occupies [begin[a], begin[a + 1])
  uint32_t tri_count = 0;
};

using AxisEvents = std::array<std::vector<Event>, 3>;

void append_events(uint32_t tri, const Box& b, AxisEvents& out) {
  for (int a = 0; a < 3; ++a) {
    if (b.min[a] == b.max[a]) {
      out[a].push_back(make_event(b.min[a], kPlanar, tri));
    } else {
      out[a].push_back(make_event(b.min[a], kStart, tri));
      out[a].push_back(make_event(b.max[a], kEnd, tri));
    }
  }
}

enum Side : uint8_t { kBoth, kBelowOnly, kAboveOnly };

// Unused capacity (in events) a waiting child list may keep before it is trimmed.
constexpr size_t kMaxSpareEvents = size_t(1) << 16;

struct Split {
  int axis = -1;
  uint32_t key = 0;
  float pos = 0.0f;
  bool planar_below = true;  // where triangles lying in the split plane go
  double cost = std::numeric_limits<double>::infinity();
};

double split_cost(const SahCosts& c, double p_below, double p_above, uint32_t n_below, uint32_t n_above) {
  const double cost = c.traversal + c.intersection * (p_below * n_below + p_above * n_above);
  return (n_below == 0 || n_above == 0) ? cost * (1.0 - c.empty_bonus) : cost;
}

// Subtrees above this depth, of at least kMinForkTriangles triangles, are built as trees of their
// own and grafted under their parent (on another thread where one is free). The rule depends on the
// tree alone, never on the thread count, and the layout writer walks the tree from its root, so
// the output is the same bytes however many threads built it.
constexpr uint32_t kForkDepth = 10;
constexpr uint32_t kMinForkTriangles = 2048;

// What every thread of one build shares: the input, the constants, the progress and the threads
// still free to take a subtree.
class BuildShared {
 public:
  BuildShared(const Mesh& mesh, const SahCosts& costs, uint32_t max_depth, unsigned threads,
              const std::function<void(double)>& progress)
      : mesh(mesh), costs(costs), max_depth(max_depth), progress_(progress), spare_threads_(int(threads) - 1) {}

  bool take_thread() {
    int spare = spare_threads_.load();
    while (spare > 0)
      if (spare_threads_.compare_exchange_weak(spare, spare - 1)) return true;
    return false;
  }
  void give_thread() { spare_threads_.fetch_add(1); }

  // weight: the share of the root's triangles a finished leaf held.
  void report(double weight) {
    if (!progress_) return;
    const std::lock_guard lock(progress_mutex_);
    done_ += weight;
    if (done_ >= next_report_) {
      progress_(std::min(done_, 1.0));
      next_report_ = done_ + 1.0 / 512;
    }
  }
  void finish() {
    if (progress_) progress_(1.0);
  }

  const Mesh& mesh;
  const SahCosts costs;
  const uint32_t max_depth;

 private:
  const std::function<void(double)>& progress_;
  std::mutex progress_mutex_;
  double done_ = 0.0;
  double next_report_ = 0.0;
  std::atomic<int> spare_threads_;
};

// Builds one subtree into a Tree of its own (root at node 0). side is scratch indexed by triangle,
// one buffer a thread (left uninitialised: split_events sets what it reads, and only the pages of
// the subtree's triangles are ever touched).
class SahBuilder {
 public:
  SahBuilder(BuildShared& shared, uint8_t* side) : shared_(shared), mesh_(shared.mesh), side_(side) {
    tree_.costs = shared.costs;
  }

  Tree run(const Box& bounds, EventList list, uint32_t depth, double weight) {
    tree_.bounds = bounds;
    tree_.nodes.emplace_back();
    build(0, bounds, std::move(list), depth, weight);
    return std::move(tree_);
  }

  static EventList root_events(const Mesh& mesh) {
    const uint32_t n = mesh.triangle_count();
    EventList list;
    list.tri_count = n;
    std::array<size_t, 3> count{};
    for (uint32_t t = 0; t < n; ++t) {
      const Box b = mesh.triangle_bounds(t);
      for (int a = 0; a < 3; ++a) count[a] += b.min[a] == b.max[a] ? 1 : 2;
    }
    for (int a = 0; a < 3; ++a) list.begin[a + 1] = list.begin[a] + count[a];
    list.events.resize(list.begin[3]);
    std::array<size_t, 3> at{list.begin[0], list.begin[1], list.begin[2]};
    for (uint32_t t = 0; t < n; ++t) {
      const Box b = mesh.triangle_bounds(t);
      for (int a = 0; a < 3; ++a) {
        if (b.min[a] == b.max[a]) {
          list.events[at[a]++] = make_event(b.min[a], kPlanar, t);
        } else {
          list.events[at[a]++] = make_event(b.min[a], kStart, t);
          list.events[at[a]++] = make_event(b.max[a], kEnd, t);
        }
      }
    }
    auto sort_axis = [&list](int a) {
      std::sort(list.events.begin() + std::ptrdiff_t(list.begin[a]),
                list.events.begin() + std::ptrdiff_t(list.begin[a + 1]));
    };
    std::thread y(sort_axis, 1), z(sort_axis, 2);  // the three axes sort at once
    sort_axis(0);
    y.join();
    z.join();
    return list;
  }

 private:
  void build(uint32_t node, const Box& box, EventList list, uint32_t depth, double weight) {
    Split split;
    if (list.tri_count > 0 && depth < shared_.max_depth) split = find_split(box, list);
    if (split.axis < 0 || !(split.cost < shared_.costs.intersection * list.tri_count)) {
      make_leaf(node, list);
      shared_.report(weight);
      return;
    }
    EventList below, above;
    split_events(list, box, split, &below, &above);
    const bool fork = depth < kForkDepth && list.tri_count >= kMinForkTriangles;
    list = EventList();  // freed before recursing, so memory stays proportional to one path
    const auto below_index = uint32_t(tree_.nodes.size());
    tree_.nodes.emplace_back();
    tree_.nodes.emplace_back();
    Node& n = tree_.nodes[node];
    n.axis = uint32_t(split.axis);
    n.split = split.pos;
    n.below = below_index;
    n.above = below_index + 1;
    const double total = double(below.tri_count) + above.tri_count;
    const double w_below = weight * below.tri_count / total;
    const Box below_box = box.below(split.axis, split.pos), above_box = box.above(split.axis, split.pos);
    if (fork) {
      fork_children(below_index, below_box, std::move(below), above_box, std::move(above), depth + 1, w_below,
                    weight - w_below);
      return;
    }
    build(below_index, below_box, std::move(below), depth + 1, w_below);
    build(below_index + 1, above_box, std::move(above), depth + 1, weight - w_below);
  }

  // Builds both children as trees of their own, the above one on another thread where one is free,
  // and grafts them at below_index and below_index + 1.
  void fork_children(uint32_t below_index, const Box& below_box, EventList below, const Box& above_box,
                     EventList above, uint32_t depth, double w_below, double w_above) {
    Tree above_tree;
    std::thread helper;
    std::exception_ptr helper_error;
    if (shared_.take_thread()) {
      helper = std::thread([&, list = std::move(above)]() mutable {
        try {
          const std::unique_ptr<uint8_t[]> side(new uint8_t[mesh_.triangle_count()]);
          above_tree = SahBuilder(shared_, side.get()).run(above_box, std::move(list), depth, w_above);
        } catch (...) {
          helper_error = std::current_exception();
        }
        shared_.give_thread();
      });
    }
    Tree below_tree = SahBuilder(shared_, side_).run(below_box, std::move(below), depth, w_below);
    if (helper.joinable()) {
      helper.join();
      if (helper_error) std::rethrow_exception(helper_error);
    } else {
      above_tree = SahBuilder(shared_, side_).run(above_box, std::move(above), depth, w_above);
    }
    graft(below_index, below_tree);
    graft(below_index + 1, above_tree);
  }

  // Puts sub's root at slot and appends the rest of its nodes and its leaf lists.
  void graft(uint32_t slot, const Tree& sub) {
    const auto base = uint32_t(tree_.nodes.size());  // sub's node i >= 1 goes to base + i - 1
    const auto first_offset = uint32_t(tree_.leaf_tris.size());
    tree_.leaf_tris.insert(tree_.leaf_tris.end(), sub.leaf_tris.begin(), sub.leaf_tris.end());
    for (size_t i = 0; i < sub.nodes.size(); ++i) {
      Node n = sub.nodes[i];
      if (n.is_leaf()) {
        n.first += first_offset;
      } else {
        n.below = base + n.below - 1;
        n.above = base + n.above - 1;
      }
      if (i == 0)
        tree_.nodes[slot] = n;
      else
        tree_.nodes.push_back(n);
    }
  }

  // The sweep of Wald & Havran 2006, Algorithm 4, over the three sorted axis runs.
  Split find_split(const Box& box, const EventList& list) const {
    Split best;
    const double area = box.surface_area();
    if (!(area > 0.0)) return best;
    const double inv_area = 1.0 / area;
    const Event* ev = list.events.data();
    for (int k = 0; k < 3; ++k) {
      if (!(box.min[k] < box.max[k])) continue;
      const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
      const double e1 = double(box.max[k1]) - box.min[k1], e2 = double(box.max[k2]) - box.min[k2];
      const double cap = e1 * e2, girth = e1 + e2;  // child area = 2 (cap + width * girth)
      uint32_t n_below = 0, n_above = list.tri_count;
      size_t i = list.begin[k];
      const size_t end = list.begin[k + 1];
      while (i < end) {
        const uint32_t key = event_key(ev[i]);
        std::array<uint32_t, 3> of_type{};  // end, planar and start events at this position
        for (; i < end && event_key(ev[i]) == key; ++i) ++of_type[event_type(ev[i])];
        const uint32_t ends = of_type[kEnd], planars = of_type[kPlanar], starts = of_type[kStart];
        n_above -= planars + ends;
        const float pos = key_float(key);
        const double p_below = 2.0 * (cap + (double(pos) - box.min[k]) * girth) * inv_area;
        const double p_above = 2.0 * (cap + (double(box.max[k]) - pos) * girth) * inv_area;
        // A split on the box boundary only pays when it cuts off the triangles lying there
        // (a flat cell); a flat cell with nothing in it would repeat forever.
        const bool at_min = pos <= box.min[k], at_max = pos >= box.max[k];
        if (!at_max && (!at_min || planars > 0)) {
          const double c = split_cost(shared_.costs, p_below, p_above, n_below + planars, n_above);
          if (c < best.cost) best = Split{k, key, pos, true, c};
        }
        if (!at_min && (!at_max || planars > 0)) {
          const double c = split_cost(shared_.costs, p_below, p_above, n_below, n_above + planars);
          if (c < best.cost) best = Split{k, key, pos, false, c};
        }
        n_below += starts + planars;
      }
    }
    return best;
  }

  // Classifies the node's triangles against the split (Wald & Havran 2006, Algorithm 5), clips the
  // straddling ones into both children and merges their new events into the children's runs.
  void split_events(const EventList& list, const Box& box, const Split& s, EventList* below,
                    EventList* above) {
    const int k = s.axis;
    const Event* ev = list.events.data();
    const size_t kb = list.begin[k], ke = list.begin[k + 1];
    for (size_t i = kb; i < ke; ++i) side_[event_tri(ev[i])] = kBoth;
    uint32_t n_below = 0, n_above = 0;
    for (size_t i = kb; i < ke; ++i) {
      const uint32_t key = event_key(ev[i]), type = event_type(ev[i]), tri = event_tri(ev[i]);
      if (type == kEnd && key <= s.key) {
        side_[tri] = kBelowOnly, ++n_below;
      } else if (type == kStart && key >= s.key) {
        side_[tri] = kAboveOnly, ++n_above;
      } else if (type == kPlanar) {
        if (key < s.key || (key == s.key && s.planar_below))
          side_[tri] = kBelowOnly, ++n_below;
        else
          side_[tri] = kAboveOnly, ++n_above;
      }
    }

    const Box below_box = box.below(k, s.pos), above_box = box.above(k, s.pos);
    AxisEvents new_below, new_above;
    for (size_t i = kb; i < ke; ++i) {
      const uint32_t tri = event_tri(ev[i]);
      if (event_type(ev[i]) != kStart || side_[tri] != kBoth) continue;
      const std::array<std::array<float, 3>, 3> corners{mesh_.vertex(tri, 0), mesh_.vertex(tri, 1),
                                                        mesh_.vertex(tri, 2)};
      Box b;
      bool in_below = clip_triangle_bounds(corners, below_box, &b);
      if (in_below) append_events(tri, b, new_below), ++n_below;
      bool in_above = clip_triangle_bounds(corners, above_box, &b);
      if (in_above) append_events(tri, b, new_above), ++n_above;
      if (!in_below && !in_above) {  // cannot happen for a triangle in the node; stay conservative
        for (const Box* child : {&below_box, &above_box}) {
          Box c = mesh_.triangle_bounds(tri);
          for (int a = 0; a < 3; ++a) {
            c.min[a] = std::clamp(c.min[a], child->min[a], child->max[a]);
            c.max[a] = std::clamp(c.max[a], child->min[a], child->max[a]);
          }
          append_events(tri, c, child == &below_box ? new_below : new_above);
        }
        ++n_below, ++n_above;
      }
    }
    for (int a = 0; a < 3; ++a) {
      std::sort(new_below[a].begin(), new_below[a].end());
      std::sort(new_above[a].begin(), new_above[a].end());
    }

    below->tri_count = n_below;
    above->tri_count = n_above;
    // One pass hands every event to its triangle's side. Reserving for the whole list leaves the
    // untouched tail unmapped; the above list waits for the below subtree, so it is trimmed.
    const size_t new_events_below = new_below[0].size() + new_below[1].size() + new_below[2].size();
    const size_t new_events_above = new_above[0].size() + new_above[1].size() + new_above[2].size();
    below->events.reserve(list.events.size() + new_events_below);
    above->events.reserve(list.events.size() + new_events_above);
    for (int a = 0; a < 3; ++a) {
      distribute_run(ev + list.begin[a], ev + list.begin[a + 1], new_below[a], new_above[a], below->events,
                     above->events);
      below->begin[a + 1] = below->events.size();
      above->begin[a + 1] = above->events.size();
    }
    if (above->events.capacity() - above->events.size() > kMaxSpareEvents) above->events.shrink_to_fit();
  }

  // Appends the events of [first, last) to the side their triangle lies on, each side merged with
  // its sorted new events; triangles on both sides got new events already.
  void distribute_run(const Event* first, const Event* last, const std::vector<Event>& extra_below,
                      const std::vector<Event>& extra_above, std::vector<Event>& below,
                      std::vector<Event>& above) const {
    size_t jb = 0, ja = 0;
    for (const Event* e = first; e != last; ++e) {
      const uint8_t side = side_[event_tri(*e)];
      if (side == kBelowOnly) {
        while (jb < extra_below.size() && extra_below[jb] < *e) below.push_back(extra_below[jb++]);
        below.push_back(*e);
      } else if (side == kAboveOnly) {
        while (ja < extra_above.size() && extra_above[ja] < *e) above.push_back(extra_above[ja++]);
        above.push_back(*e);
      }
    }
    below.insert(below.end(), extra_below.begin() + std::ptrdiff_t(jb), extra_below.end());
    above.insert(above.end(), extra_above.begin() + std::ptrdiff_t(ja), extra_above.end());
  }

  void make_leaf(uint32_t node, const EventList& list) {
    Node& n = tree_.nodes[node];
    n.axis = kLeaf;
    n.first = uint32_t(tree_.leaf_tris.size());
    n.count = list.tri_count;
    for (size_t i = list.begin[0]; i < list.begin[1]; ++i)
      if (event_type(list.events[i]) != kEnd) tree_.leaf_tris.push_back(event_tri(list.events[i]));
    std::sort(tree_.leaf_tris.begin() + n.first, tree_.leaf_tris.end());
  }

  BuildShared& shared_;
  const Mesh& mesh_;
  Tree tree_;
  uint8_t* const side_;  // per triangle, valid for the node being split
};

}  // namespace

uint32_t default_max_depth(uint64_t triangle_count) {
  const double n = double(std::max<uint64_t>(triangle_count, 1));
  return std::min<uint32_t>(kMaxDepthCap, uint32_t(std::lround(8.0 + 1.3 * std::log2(n))));
}

Tree build_sah_tree(const Mesh& mesh, const Box& bounds, const SahCosts& costs, uint32_t max_depth, unsigned threads,
                    const std::function<void(double)>& progress) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  BuildShared shared(mesh, costs, std::min(max_depth, kMaxDepthCap), threads, progress);
  const std::unique_ptr<uint8_t[]> side(new uint8_t[mesh.triangle_count()]);
  Tree tree = SahBuilder(shared, side.get()).run(bounds, SahBuilder::root_events(mesh), 0, 1.0);
  shared.finish();
  return tree;
}

}  // namespace tessera::pack::kd
