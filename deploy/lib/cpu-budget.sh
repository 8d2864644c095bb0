# Fixed, isolated compute budgets for benchmark workers on one host (sourced by deploy/bench-cluster).
# S workers on one machine are not S devices: they share physical cores (hyperthread siblings),
# time slices with the master and the link's processes, caches and memory. Here every worker gets
#   - hardware threads of physical cores of its own kind: one thread of a physical core, its
#     siblings left idle (a busy sibling would take half the core's throughput, more or less
#     depending on what it runs), and
#   - a CFS bandwidth quota in a cgroup of its own (v2 cpu.max, else v1 cpu.cfs_quota_us): at most
#     PCT % of one thread's time per period, whether it runs alone or beside the others;
# and a few physical cores are kept, all their threads, for the master and the relay.
# Only files under /sys and sh: it works as root on a machine without any package.

# "0-3,8,10-11" -> one number a line.
budget_expand_list() {
  local part
  local IFS=,
  for part in $1; do
    case "$part" in
      *-*) seq "${part%-*}" "${part#*-}" ;;
      '') ;;
      *) echo "$part" ;;
    esac
  done
}

# Physical cores usable here, in package/core order, as BUDGET_CORES (their first hardware thread)
# and BUDGET_SIBLINGS (every thread of each core, comma-separated, same index). Only threads this
# process may run on count (a container's or taskset's CPU mask). BUDGET_SYSFS_CPU and
# BUDGET_ALLOWED stand in for /sys/devices/system/cpu and the mask (tests).
budget_read_topology() {
  local sys="${BUDGET_SYSFS_CPU:-/sys/devices/system/cpu}" allowed cpu sib key
  allowed="${BUDGET_ALLOWED:-$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)}"
  allowed=" $(budget_expand_list "$allowed" | tr '\n' ' ') "
  BUDGET_CORES=() BUDGET_SIBLINGS=()
  declare -A seen=()
  local lines=()
  for cpu in $(budget_expand_list "$(cat "$sys/online" 2>/dev/null || echo "0-$(($(nproc) - 1))")"); do
    [[ "$allowed" == *" $cpu "* ]] || continue
    sib="$(cat "$sys/cpu$cpu/topology/thread_siblings_list" 2>/dev/null || echo "$cpu")"
    key="$(cat "$sys/cpu$cpu/topology/physical_package_id" 2>/dev/null || echo 0)"
    [ -z "${seen[$sib]:-}" ] || continue
    seen[$sib]=1
    # Only the allowed threads of the core.
    sib="$(for s in $(budget_expand_list "$sib"); do [[ "$allowed" == *" $s "* ]] && echo "$s"; done | paste -sd,)"
    lines+=("$key $cpu $sib")
  done
  while read -r _ cpu sib; do
    BUDGET_CORES+=("$cpu")
    BUDGET_SIBLINGS+=("$sib")
  done < <(printf '%s\n' "${lines[@]}" | sort -n -k1,1 -k2,2)
  BUDGET_THREADS_PER_CORE="$(for s in "${BUDGET_SIBLINGS[@]}"; do echo "$s" | tr ',' '\n' | wc -l; done | sort -n | tail -n1)"
}

# Placement for up to MAX_S workers of THREADS threads, MASTER_CORES physical cores (auto: 1 where
# there are 4 or more, else 0) kept for the master and the relay, and the budget (auto or a
# percentage of one hardware thread). Sets BUDGET_WORKER_CPUS (worker k's threads, comma-separated),
# BUDGET_MASTER_CORES, BUDGET_SLOTS (workers that fit one a core), BUDGET_PER_CORE (workers a core
# at MAX_S) and BUDGET_PCT; returns 1 with the reason in BUDGET_WHY. Worker k runs on the first
# thread of physical core MASTER_CORES + (k mod slots) (THREADS cores for THREADS threads).
budget_place() { # MAX_S THREADS MASTER_CORES BUDGET
  local max_s="$1" threads="$2" ncores k j c
  budget_read_topology
  ncores=${#BUDGET_CORES[@]}
  BUDGET_MASTER_CORES="$3"
  if [ "$BUDGET_MASTER_CORES" = auto ]; then
    BUDGET_MASTER_CORES=0
    [ "$ncores" -lt 4 ] || BUDGET_MASTER_CORES=1
  fi
  BUDGET_SLOTS=$(((ncores - BUDGET_MASTER_CORES) / threads))
  if [ "$BUDGET_SLOTS" -lt 1 ]; then
    BUDGET_WHY="--master-cores $BUDGET_MASTER_CORES leaves no physical core for a worker of $threads thread(s) (this machine has $ncores)"
    return 1
  fi
  BUDGET_PER_CORE=$(((max_s + BUDGET_SLOTS - 1) / BUDGET_SLOTS))
  if [ "$4" = auto ]; then
    BUDGET_PCT=100
    [ "$BUDGET_PER_CORE" = 1 ] || BUDGET_PCT=$((95 / BUDGET_PER_CORE))
  else
    BUDGET_PCT="$4"
    if [ $((BUDGET_PCT * BUDGET_PER_CORE)) -gt 100 ]; then
      BUDGET_WHY="--cpu-budget $BUDGET_PCT: $BUDGET_PER_CORE workers share each core at S=$max_s ($BUDGET_SLOTS for workers), so at most $((100 / BUDGET_PER_CORE)) keeps their budgets apart"
      return 1
    fi
  fi
  BUDGET_WORKER_CPUS=()
  for ((k = 0; k < max_s; k++)); do
    c=""
    for ((j = 0; j < threads; j++)); do c+="${c:+,}${BUDGET_CORES[$((BUDGET_MASTER_CORES + (k % BUDGET_SLOTS) * threads + j))]}"; done
    BUDGET_WORKER_CPUS+=("$c")
  done
}

# The hardware threads of the master and the relay beside S workers of THREADS threads: every
# thread of the cores kept for them and of those no worker of S runs on (empty: none is left).
budget_master_cpus() { # S THREADS
  local used=$(($1 < BUDGET_SLOTS ? $1 : BUDGET_SLOTS)) i list=""
  for ((i = 0; i < ${#BUDGET_CORES[@]}; i++)); do
    if [ "$i" -lt "$BUDGET_MASTER_CORES" ] || [ "$i" -ge $((BUDGET_MASTER_CORES + used * $2)) ]; then
      list+="${list:+,}${BUDGET_SIBLINGS[$i]}"
    fi
  done
  echo "$list"
}

# Where the cpu controller can be used: sets BUDGET_CGROUP_KIND (v2 | v1) and BUDGET_CGROUP_ROOT,
# or returns 1 with the reason in BUDGET_CGROUP_WHY.
budget_find_cgroup() {
  BUDGET_CGROUP_KIND="" BUDGET_CGROUP_ROOT="" BUDGET_CGROUP_WHY=""
  local v2 v1
  v2="$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)"
  v1="$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2; exit }' /proc/mounts)"
  if [ "$(id -u)" != 0 ]; then
    BUDGET_CGROUP_WHY="not root"
    return 1
  fi
  if [ -n "$v2" ] && grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null; then
    BUDGET_CGROUP_KIND=v2 BUDGET_CGROUP_ROOT="$v2"
  elif [ -n "$v1" ] && [ -f "$v1/cpu.cfs_quota_us" ]; then
    BUDGET_CGROUP_KIND=v1 BUDGET_CGROUP_ROOT="$v1"
  else
    BUDGET_CGROUP_WHY="no cgroup with the cpu controller mounted"
    return 1
  fi
}

# Makes the parent cgroup NAME with one child per worker (w0 .. wN-1), each limited to QUOTA_US of
# CPU time per PERIOD_US. Sets BUDGET_CGROUP (the parent's path); returns 1 with the reason in
# BUDGET_CGROUP_WHY, having removed what it made.
budget_make_cgroups() { # NAME WORKERS QUOTA_US PERIOD_US
  local name="$1" n="$2" quota="$3" period="$4" k dir err
  BUDGET_CGROUP="$BUDGET_CGROUP_ROOT/$name"
  err="$(
    set -e
    exec 2>&1
    if [ "$BUDGET_CGROUP_KIND" = v2 ]; then
      grep -qw cpu "$BUDGET_CGROUP_ROOT/cgroup.subtree_control" || echo +cpu >"$BUDGET_CGROUP_ROOT/cgroup.subtree_control"
      mkdir "$BUDGET_CGROUP"
      echo +cpu >"$BUDGET_CGROUP/cgroup.subtree_control"
      for ((k = 0; k < n; k++)); do
        dir="$BUDGET_CGROUP/w$k"
        mkdir "$dir"
        echo "$quota $period" >"$dir/cpu.max"
      done
    else
      mkdir "$BUDGET_CGROUP"
      for ((k = 0; k < n; k++)); do
        dir="$BUDGET_CGROUP/w$k"
        mkdir "$dir"
        echo "$period" >"$dir/cpu.cfs_period_us"
        echo "$quota" >"$dir/cpu.cfs_quota_us"
      done
    fi
  )" || {
    BUDGET_CGROUP_WHY="cgroup $BUDGET_CGROUP_KIND at $BUDGET_CGROUP_ROOT: $(echo "$err" | tail -n1)"
    budget_remove_cgroups
    return 1
  }
}

# BUDGET_PREFIX: the command line prefix that starts a program inside worker K's cgroup (the shell
# moves itself in, then execs the program, so every thread it makes is counted from the start). It
# goes before `ip netns exec`, whose mount namespace has a /sys of its own.
budget_cgroup_prefix() { # K
  # shellcheck disable=SC2016
  BUDGET_PREFIX=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$BUDGET_CGROUP/w$1")
}

# CPU time the worker cgroups were throttled (v2 cpu.stat throttled_usec, v1 throttled_time ns), in ms,
# summed: shows that the quota was what limited them.
budget_throttled_ms() {
  [ -n "${BUDGET_CGROUP:-}" ] && [ -d "$BUDGET_CGROUP" ] || return 0
  local f
  for f in "$BUDGET_CGROUP"/w*/cpu.stat; do cat "$f"; done 2>/dev/null |
    awk '$1 == "throttled_usec" { ms += $2 / 1000 } $1 == "throttled_time" { ms += $2 / 1e6 } END { printf "%.0f\n", ms }'
}

# Removes the cgroups (their processes must have ended). Safe to call twice.
budget_remove_cgroups() {
  [ -n "${BUDGET_CGROUP:-}" ] && [ -d "$BUDGET_CGROUP" ] || return 0
  local d
  # The killed workers may take a moment to be gone from their cgroups.
  for _ in $(seq 20); do
    for d in "$BUDGET_CGROUP"/w*/; do if [ -d "$d" ]; then rmdir "$d" 2>/dev/null || true; fi; done
    rmdir "$BUDGET_CGROUP" 2>/dev/null && break
    sleep 0.1
  done
  return 0
}
