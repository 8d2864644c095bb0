# shellcheck shell=bash
# The results of deploy/bench-cluster: the efficiency and its factors filled into results.csv, the
# Markdown tables and the gnuplot plots (sourced by deploy/bench-cluster; also its `plot` command).
# Uses the caller's say and fail.
# CSV columns, 1-based: 1 scene 2 net 3 workers 4 threads 5 schedule 6 tile 7 frames 8 best_ms
# 9 mean_ms 10 efficiency 11 latency_ms 12 best_latency_ms 13 kb_per_frame 14 reassigned 15 emulation
# 16 busy_sum_ms 17 busy_max_ms 18 cpu_sum_ms (of the best frame: the workers' busy time summed,
# the slowest worker's, their render threads' CPU time summed) 19 work_ratio 20 balance
# 21 busy_share (see fill_efficiency) 22 busy_basis: what busy time is - "wall" (render wall time),
# or under a CPU quota below one thread "cpu/Q" (render CPU time over the quota Q: the wall time the
# work takes at the budget; the kernel throttles a worker between tiles as well as during them, so
# wall render times would count part of the budget's pauses as idle) 23 reissued (tail copies, all
# measured frames)
CSV_HEADER="scene,net,workers,threads,schedule,tile,frames,best_ms,mean_ms,efficiency,latency_ms,best_latency_ms,kb_per_frame,reassigned,emulation,busy_sum_ms,busy_max_ms,cpu_sum_ms,work_ratio,balance,busy_share,busy_basis,reissued"

# Efficiency column from the best frame times: tau_1 of the smallest S of each scene/net/schedule/tile.
# It splits into three factors, E = tau_1 / (S tau_S) = balance * busy_share / (work_ratio * busy_share_1):
#   work_ratio  W_S / W_1, W the workers' render time summed: > 1 when S workers on one machine slow
#               each other down (shared caches, memory bandwidth, clock, time slicing) - not the link;
#   balance     W_S / (S * M_S), M the slowest worker's render time: how evenly the tiles were shared;
#   busy_share  M_S / tau_S: the part of the frame the slowest worker rendered; the rest is waiting
#               for requests and tiles on the link, queues, decoding, compositing.
fill_efficiency() { # CSV_IN CSV_OUT
  awk -F, -v OFS=, 'NR == 1 { print; next } { rows[NR] = $0; k = $1 FS $2 FS $5 FS $6
      if (!(k in s1) || $3 < s1[k]) { s1[k] = $3; t1[k] = $8; w1[k] = $16 } }
    END { for (i = 2; i <= NR; i++) { $0 = rows[i]; k = $1 FS $2 FS $5 FS $6
        $10 = ($8 > 0) ? sprintf("%.3f", t1[k] * s1[k] / ($3 * $8)) : ""
        if ($16 > 0 && $17 > 0 && w1[k] > 0) {
          $19 = sprintf("%.3f", $16 / w1[k]); $20 = sprintf("%.3f", $16 / ($3 * $17)); $21 = sprintf("%.3f", $17 / $8)
        } else if (NF >= 16) { $19 = $20 = $21 = "" }
        print } }' "$1" >"$2"
}

uniq_col() { awk -F, -v c="$2" 'NR > 1 && !seen[$c]++ { print $c }' "$1"; }

make_tables() { # RESULTS_DIR
  local dir="$1" csv="$1/results.csv" md="$1/tables.md" table_tile
  table_tile="$(cat "$dir/table_tile" 2>/dev/null || echo 128)"
  {
    echo "# Cluster benchmark"
    echo
    [ -f "$dir/meta.txt" ] && sed 's/^/    /' "$dir/meta.txt" && echo
    local net scene sch
    for net in $(uniq_col "$csv" 2); do
      echo "## Network: $net"
      echo
      awk -F, -v n="$net" 'NR > 1 && $2 == n { print "Emulated: " $15; exit }' "$csv"
      echo
      awk -F, -v n="$net" 'NR > 1 && $2 == n && $22 ~ /^cpu\// { q = substr($22, 5)
          print "Busy time: the workers'"'"' render CPU time over their quota (" q " of a thread): the wall time their work takes at the budget."
          print; exit }' "$csv"
      local smax
      smax="$(awk -F, -v n="$net" 'NR > 1 && $2 == n && $3 > m { m = $3 } END { print m }' "$csv")"
      for sch in $(awk -F, -v n="$net" 'NR > 1 && $2 == n && !seen[$5]++ { print $5 }' "$csv"); do
        echo "### Table 8 shape: frame time (ms, best frame) by tile size, $sch schedule"
        echo
        local s sub=a
        for s in $(awk -F, -v n="$net" -v m="$smax" 'NR > 1 && $2 == n && ($3 == 1 || $3 == m) && !seen[$3]++ { print $3 }' "$csv" | sort -n); do
          echo "($sub) $s worker(s)"; sub=b
          echo
          awk -F, -v n="$net" -v s="$s" -v c="$sch" '
            NR > 1 && $2 == n && $3 == s && $5 == c { if (!($6 in ts)) { ts[$6] = 1; tl[++nt] = $6 }
              if (!($1 in sc)) { sc[$1] = 1; sl[++ns] = $1 } v[$1, $6] = $8 }
            END { for (i = 1; i <= nt; i++) for (j = i + 1; j <= nt; j++) if (tl[j] + 0 > tl[i] + 0) { x = tl[i]; tl[i] = tl[j]; tl[j] = x }
              printf "| scene |"; for (i = 1; i <= nt; i++) printf " %sx%s |", tl[i], tl[i]; print ""
              printf "|---|"; for (i = 1; i <= nt; i++) printf "---:|"; print ""
              for (j = 1; j <= ns; j++) { printf "| %s |", sl[j]
                for (i = 1; i <= nt; i++) printf " %s |", ((sl[j], tl[i]) in v) ? sprintf("%.1f", v[sl[j], tl[i]]) : "-"; print "" } }' "$csv"
          echo
        done
      done
      echo "### Table 9 shape: frame time (ms, best frame) and efficiency by workers, ${table_tile}x${table_tile} tiles"
      echo
      local sub=a
      for sch in $(awk -F, -v n="$net" 'NR > 1 && $2 == n && !seen[$5]++ { print $5 }' "$csv"); do
        echo "($sub) $sch"; sub="$(echo "$sub" | tr 'a-y' 'b-z')"
        echo
        awk -F, -v n="$net" -v c="$sch" -v t="$table_tile" '
          NR > 1 && $2 == n && $5 == c && $6 == t { if (!($3 in ws)) { ws[$3] = 1; wl[++nw] = $3 }
            if (!($1 in sc)) { sc[$1] = 1; sl[++ns] = $1 } v[$1, $3] = sprintf("%.1f (%.3f)", $8, $10) }
          END { for (i = 1; i <= nw; i++) for (j = i + 1; j <= nw; j++) if (wl[j] + 0 < wl[i] + 0) { x = wl[i]; wl[i] = wl[j]; wl[j] = x }
            if (!nw) { print "(no runs with this tile size)"; exit }
            printf "| scene |"; for (i = 1; i <= nw; i++) printf " %s |", wl[i]; print ""
            printf "|---|"; for (i = 1; i <= nw; i++) printf "---:|"; print ""
            for (j = 1; j <= ns; j++) { printf "| %s |", sl[j]
              for (i = 1; i <= nw; i++) printf " %s |", ((sl[j], wl[i]) in v) ? v[sl[j], wl[i]] : "-"; print "" } }' "$csv"
        echo
      done
      echo "### All points"
      echo
      echo "Efficiency = balance x busy share / (work ratio x busy share at the smallest S); work ratio: the"
      echo "workers' render time summed, over that at the smallest S; CPU/busy: their render threads' CPU time"
      echo "over that render time (below 1: the threads waited for a core - or, under a CPU budget below 100 %,"
      echo "for their next quota period: then about the budget)."
      echo
      echo "| scene | S | schedule | tile | best ms | mean ms | efficiency | work ratio | balance | busy share | CPU/busy | latency ms | KB/frame | reassigned | tail copies |"
      echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      awk -F, -v n="$net" 'function f(v) { return v == "" ? "-" : sprintf("%.3f", v) }
        NR > 1 && $2 == n { printf "| %s | %s | %s | %s | %.1f | %.1f | %.3f | %s | %s | %s | %s | %.1f | %.0f | %s | %s |\n", $1, $3, $5, $6, $8, $9, $10,
          f($19), f($20), f($21), ($16 > 0 && $18 != "") ? sprintf("%.3f", $18 / $16) : "-", $11, $13, $14, ($23 == "" ? "-" : $23) }' "$csv"
      echo
    done
  } >"$md"
}

make_plots() { # RESULTS_DIR
  local dir="$1" csv="$1/results.csv" table_tile
  table_tile="$(cat "$dir/table_tile" 2>/dev/null || echo 128)"
  local gp
  gp="$(command -v gnuplot || true)"
  if [ -z "$gp" ]; then  # never installed behind the user's back: ./tessera build installs gnuplot-nox
    say "gnuplot missing: no plots (./tessera build or apt-get install gnuplot-nox, then: deploy/bench-cluster plot $dir)"
    return 0
  fi
  local term="pngcairo size 900,600 font 'sans,11'"
  "$gp" -e "set terminal pngcairo" -e "exit" >/dev/null 2>&1 || term="png size 900,600"
  mkdir -p "$dir/plots"
  local data="$dir/plots/data"
  mkdir -p "$data"
  local net scene sch
  for net in $(uniq_col "$csv" 2); do
    for scene in $(awk -F, -v n="$net" 'NR > 1 && $2 == n && !seen[$1]++ { print $1 }' "$csv"); do
      local emul
      # The emulation's description, a few parts a line (gnuplot's "\n" in a double-quoted title).
      emul="$(awk -F, -v n="$net" 'NR > 1 && $2 == n { print $15; exit }' "$csv" |
        awk '{ gsub(/"/, ""); n = split($0, p, /; /); o = p[1]; for (i = 2; i <= n; i++) o = o ";" ((i % 2 || p[i] ~ /^NOT/) ? "\\n" : " ") p[i]; print o }')"
      # Efficiency vs workers: one line per schedule at the table tile, plus every tile of static dashed.
      local plot="" i=1 f
      local tiles
      tiles="$(awk -F, -v n="$net" -v s="$scene" 'NR > 1 && $2 == n && $1 == s && !seen[$6]++ { print $6 }' "$csv" | sort -n)"
      for sch in $(awk -F, -v n="$net" -v s="$scene" 'NR > 1 && $2 == n && $1 == s && !seen[$5]++ { print $5 }' "$csv"); do
        local t
        for t in $tiles; do
          f="$data/eff_${scene}_${net}_${sch}_${t}.dat"
          awk -F, -v n="$net" -v s="$scene" -v c="$sch" -v t="$t" 'NR > 1 && $2 == n && $1 == s && $5 == c && $6 == t { print $3, $10, $8 }' "$csv" | sort -n >"$f"
          [ -s "$f" ] || continue
          if [ "$t" = "$table_tile" ]; then
            plot+="${plot:+, }'$f' using 1:2 with linespoints lw 2.5 pt 7 ps 1.3 lc $i title '$sch, ${t}px'"
          else
            plot+="${plot:+, }'$f' using 1:2 with linespoints lw 1 dt 2 pt 6 lc $i title '$sch, ${t}px'"
          fi
        done
        i=$((i + 1))
      done
      [ -n "$plot" ] || continue
      "$gp" <<GP
set terminal $term
set output '$dir/plots/efficiency_${scene}_${net}.png'
set title "Efficiency tau_1/(S tau_S) - $scene, net $net\n$emul" noenhanced
set xlabel 'workers S'
set ylabel 'efficiency'
set logscale x 2
set xtics (1, 2, 4, 8, 16, 32, 64)
set yrange [0:$(awk -F, -v n="$net" -v s="$scene" 'BEGIN { m = 1.15 } NR > 1 && $2 == n && $1 == s && $10 * 1.08 > m { m = $10 * 1.08 } END { print m }' "$csv")]
set grid
set key outside right top
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 3 lc rgb 'gray40'
plot $plot
GP
      # Frame time vs tile size: one panel per schedule, one line per S.
      local schs nsch
      schs="$(awk -F, -v n="$net" -v s="$scene" 'NR > 1 && $2 == n && $1 == s && !seen[$5]++ { print $5 }' "$csv")"
      nsch="$(echo "$schs" | wc -w)"
      {
        echo "set terminal ${term/900,600/$((420 * nsch + 200)),520}"
        echo "set output '$dir/plots/frametime_${scene}_${net}.png'"
        echo "set multiplot layout 1,$nsch title \"Best frame time vs tile size - $scene, net $net\\n$emul\" noenhanced"
        echo "set logscale x 2"
        echo "set xrange [22:370]"
        echo "set xtics (16, 32, 64, 128, 256, 512)"
        echo "set xlabel 'tile size (px)'"
        echo "set ylabel 'frame time (ms)'"
        echo "set grid"
        echo "set key top right"
        local ymax
        ymax="$(awk -F, -v n="$net" -v s="$scene" 'NR > 1 && $2 == n && $1 == s && $8 > m { m = $8 } END { print m * 1.15 }' "$csv")"
        echo "set yrange [0:$ymax]"
        for sch in $schs; do
          local p="" w j=1
          for w in $(awk -F, -v n="$net" -v s="$scene" -v c="$sch" 'NR > 1 && $2 == n && $1 == s && $5 == c && !seen[$3]++ { print $3 }' "$csv" | sort -n); do
            f="$data/ft_${scene}_${net}_${sch}_S${w}.dat"
            awk -F, -v n="$net" -v s="$scene" -v c="$sch" -v w="$w" 'NR > 1 && $2 == n && $1 == s && $5 == c && $3 == w { print $6, $8 }' "$csv" | sort -n >"$f"
            p+="${p:+, }'$f' using 1:2 with linespoints lw 2 pt 7 lc $j title 'S=$w'"
            j=$((j + 1))
          done
          echo "set title '$sch'"
          echo "plot $p"
        done
        echo "unset multiplot"
      } | "$gp"
    done
  done
  say "plots: $(cd "$dir/plots" && ls ./*.png 2>/dev/null | sed 's|^\./||' | tr '\n' ' ')"
}
