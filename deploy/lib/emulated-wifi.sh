# shellcheck shell=bash
# The emulated shared Wi-Fi link of deploy/bench-cluster (--net wifi; sourced by it): network
# namespaces, veth pairs and a bridge, the shared rate (ifb + HTB), random loss (nftables), and the
# relay's delay and jitter. Uses the caller's settings (subnet, rate, delay, jitter, loss), tools
# (IPX, TCX, NFTX) and the lists of what it made (namespaces), which its cleanup removes.
NET_OK=0 SHAPED=0 LOSSY=0 RELAY_RATE=0 DELAYED=0 EMULATION="" NOT_EMULATED=""
worker_ns() { echo "$TAG-w$1"; }
worker_ip() { echo "$subnet.$((10 + $1))"; }

make_links() { # MAX_WORKERS: the access point's bridge and one namespace + veth pair per worker
  local n="$1" k ns
  IPX -n "$NS_AP" link set lo up || return 1
  IPX -n "$NS_AP" link add br0 type bridge || return 1
  IPX -n "$NS_AP" addr add "$subnet.1/24" dev br0 || return 1
  IPX -n "$NS_AP" link set br0 up || return 1
  for ((k = 0; k < n; k++)); do
    ns="$(worker_ns "$k")"
    IPX netns add "$ns" || return 1
    namespaces+=("$ns")
    IPX -n "$ns" link set lo up || return 1
    IPX link add sta0 netns "$ns" type veth peer name "ap$k" netns "$NS_AP" || return 1
    IPX -n "$ns" addr add "$(worker_ip "$k")/24" dev sta0 || return 1
    IPX -n "$ns" link set sta0 up || return 1
    IPX -n "$NS_AP" link set "ap$k" master br0 || return 1
    IPX -n "$NS_AP" link set "ap$k" up || return 1
    # One MTU-sized packet per skb, as on the air: no 64 KB TSO/GSO super-packets, which would make
    # the loss rule drop bursts and count far fewer packets than are sent.
    IPX -n "$ns" link set dev sta0 gso_max_segs 1 && IPX -n "$NS_AP" link set dev "ap$k" gso_max_segs 1 ||
      NOT_EMULATED+="MTU-sized packets ($k: gso_max_segs not settable); "
  done
  IPX -n "$NS_AP" link set dev br0 gso_max_segs 1 || NOT_EMULATED+="MTU-sized packets (br0: gso_max_segs not settable); "
  # ip netns exec also needs to mount /sys in a mount namespace of its own.
  IPX netns exec "$NS_AP" true || return 1
  IPX netns exec "$(worker_ns 0)" true || return 1
}

setup_wifi() { # MAX_WORKERS
  local n="$1" k log="$LOG_DIR/net-setup.log"
  NET_OK=0 SHAPED=0 LOSSY=0 RELAY_RATE=0 DELAYED=0 EMULATION="" NOT_EMULATED=""
  : >"$log"
  if [ "$(id -u)" != 0 ]; then
    NOT_EMULATED+="namespaces (not root); "
  elif [ -z "$IP" ]; then
    NOT_EMULATED+="namespaces (no ip binary: iproute2 missing; see deploy/make-bundle --net-tools); "
  elif ! IPX netns add "$NS_AP" 2>>"$log"; then
    NOT_EMULATED+="namespaces ($(tail -n1 "$log")); "
  else
    namespaces+=("$NS_AP")
    if ! make_links "$n" 2>>"$log"; then
      NOT_EMULATED+="namespaces (link setup failed: $(tail -n1 "$log")); "
      for k in "${namespaces[@]}"; do IPX netns del "$k" 2>/dev/null || true; done
      namespaces=()
    else
      NET_OK=1
    fi
  fi
  if [ "$NET_OK" = 1 ]; then
    # Shared rate: both directions of every station through one ifb + HTB class (air time).
    if rate_is_zero; then
      :
    elif [ -z "$TC" ]; then
      NOT_EMULATED+="kernel rate limit (no tc binary); "
    elif {
      IPX -n "$NS_AP" link add ifb0 type ifb &&
        IPX -n "$NS_AP" link set ifb0 up &&
        TCX -n "$NS_AP" qdisc add dev ifb0 root handle 1: htb default 10 &&
        TCX -n "$NS_AP" class add dev ifb0 parent 1: classid 1:10 htb rate "$rate" ceil "$rate" quantum 60000 &&
        TCX -n "$NS_AP" qdisc add dev ifb0 parent 1:10 handle 10: pfifo limit 1000 &&
        TCX -n "$NS_AP" qdisc add dev br0 clsact &&
        TCX -n "$NS_AP" filter add dev br0 egress protocol all u32 match u32 0 0 action mirred egress redirect dev ifb0 &&
        TCX -n "$NS_AP" filter add dev br0 ingress protocol all u32 match u32 0 0 action mirred egress redirect dev ifb0
    } 2>>"$log"; then
      SHAPED=1
    else
      NOT_EMULATED+="kernel rate limit ($(grep -v '^Warning' "$log" | tail -n1)); "
      TCX -n "$NS_AP" qdisc del dev br0 clsact 2>/dev/null || true
      IPX -n "$NS_AP" link del ifb0 2>/dev/null || true
    fi
    # Loss: an nftables bridge table drops frames entering the bridge from stations and frames the
    # access point sends to them.
    if awk -v l="$loss" 'BEGIN { exit !(l == 0) }'; then
      :
    elif [ -z "$NFT" ]; then
      NOT_EMULATED+="loss (no nft binary: nftables missing; ./tessera build installs it); "
    else
      local per_million
      per_million="$(awk -v l="$loss" 'BEGIN { printf "%d", l * 10000 + 0.5 }')"
      if NFTX -f - 2>>"$log" <<NFT; then
table bridge $TAG {
  chain from_stations { type filter hook prerouting priority 0; policy accept; numgen random mod 1000000 < $per_million counter drop; }
  chain to_stations { type filter hook output priority 0; policy accept; numgen random mod 1000000 < $per_million counter drop; }
}
NFT
        LOSSY=1
      else
        NOT_EMULATED+="loss (nft: $(tail -n1 "$log")); "
      fi
    fi
  fi
  if [ "$NET_OK" = 0 ] && awk -v l="$loss" 'BEGIN { exit !(l > 0) }'; then NOT_EMULATED+="loss (needs the namespaces); "; fi
  # Delay and jitter (and the rate where the kernel could not shape): tessera-netem-relay.
  if [ "$delay_us" -gt 0 ] || { [ "$SHAPED" = 0 ] && ! rate_is_zero; }; then
    if bin tessera-netem-relay >/dev/null; then
      DELAYED=1
      if [ "$SHAPED" = 0 ] && ! rate_is_zero; then RELAY_RATE=1; fi
    else
      NOT_EMULATED+="delay and jitter (tessera-netem-relay not built); "
    fi
  fi
  local parts=()
  if [ "$NET_OK" = 1 ]; then parts+=("namespaces+veth+bridge $subnet.0/24"); else parts+=("loopback (no namespaces)"); fi
  [ "$SHAPED" = 1 ] && parts+=("shared rate $rate (ifb+HTB)")
  [ "$RELAY_RATE" = 1 ] && parts+=("shared rate $rate (relay)")
  [ "$LOSSY" = 1 ] && parts+=("loss ${loss}% each way (nft)")
  [ "$DELAYED" = 1 ] && [ "$delay_us" -gt 0 ] && parts+=("delay $delay +- $jitter each way (relay)")
  EMULATION="$(IFS=';'; echo "${parts[*]}" | sed 's/;/; /g')"
  [ -z "$NOT_EMULATED" ] || EMULATION+="; NOT emulated: ${NOT_EMULATED%; }"
}
