# The query-cost curve: ns per absent-key query against the number of keys n, one at a time (left)
# and batched (right), for every filter of bloomery-curve's output, beside the machine's
# random-access bounds over an array of the filters' size (10 bits per key): a dependent chain
# of loads (latency bound) and independent loads (throughput bound). Data: blocks 0 and 1 the
# bounds, then one block per filter, each headed by its name (see curve.cpp).
#
#   gnuplot -e "data='curve.dat'; out='build-bench/query-cost.svg'" bench/curve/plot.gp
# (bench/run.sh --curve runs bloomery-curve and this script.)
if (!exists("data")) data = 'build-bench/results/curve.dat'
if (!exists("out")) out = 'build-bench/query-cost.svg'

if (!exists("term")) term = 'svg'

if (term eq 'svg') {
  set terminal svg size 1200,700 dynamic enhanced font 'Helvetica,14' background rgb 'white'
} else {
  set terminal pngcairo size 1200,700 enhanced font 'Helvetica,12' background rgb 'white'
}
set output out
set encoding utf8
set datafile missing '-'

stats data using 1 nooutput
blocks = STATS_blocks
stats data index 0 using 1 nooutput  # the bounds' block has every n of the run
nmax = STATS_max

# Bounds in black and grey; bloomery's filters solid, each peer dashed in the colour of the
# bloomery filter it is compared with (blocked, classic, static).
set style line 1 lc rgb '#000000' lw 2 dt 2
set style line 2 lc rgb '#888888' lw 2 dt 3
set style line 11 lc rgb '#1f77b4' lw 1.5 pt 7 ps 0.7
set style line 12 lc rgb '#ff7f0e' lw 1.5 pt 5 ps 0.7
set style line 13 lc rgb '#2ca02c' lw 1.5 pt 9 ps 0.8
set style line 14 lc rgb '#d62728' lw 1.5 pt 11 ps 0.8
set style line 15 lc rgb '#9467bd' lw 1.5 pt 13 ps 0.8
set style line 16 lc rgb '#8c564b' lw 1.5 pt 4 ps 0.7
set style line 17 lc rgb '#1f77b4' lw 1.5 pt 6 ps 0.7 dt 4
set style line 18 lc rgb '#ff7f0e' lw 1.5 pt 4 ps 0.7 dt 4
set style line 19 lc rgb '#2ca02c' lw 1.5 pt 8 ps 0.8 dt 4
set style line 20 lc rgb '#7f7f7f' lw 1.5 pt 10 ps 0.8 dt 4

set multiplot title "Cost of an absent-key query against the number of keys"
set logscale xy
set format x '10^{%L}'
set grid xtics ytics mxtics mytics lc rgb '#dddddd' lw 1, lc rgb '#eeeeee' lw 1
set border lc rgb '#444444'
set xlabel 'keys n (filters at 1% FPR, about 10 bits per key)'
set xrange [5e3:2 * nmax]
set yrange [0.5:1000]

set origin 0, 0.2
set size 0.5, 0.72
set ylabel 'ns per query (log scale)'
set label 1 'one at a time' at graph 0.04, 0.94 left font ',14'
set key at screen 0.08, 0.15 left top vertical Left reverse maxrows 4 samplen 2.5 spacing 1.1 font ',12'
plot data index 1 using 1:2 with lines ls 1 title columnheader(1) noenhanced, \
     data index 0 using 1:2 with lines ls 2 title columnheader(1) noenhanced, \
     for [i=2:blocks-1] data index i using 1:2 with linespoints ls (9 + i) title columnheader(1) noenhanced

unset key
unset ylabel
set origin 0.5, 0.2
set size 0.5, 0.72
set label 1 'batched (1024 keys per call)' at graph 0.04, 0.94 left font ',14'
plot data index 1 using 1:3 with lines ls 1 notitle, \
     data index 0 using 1:3 with lines ls 2 notitle, \
     for [i=2:blocks-1] data index i using 1:3 with linespoints ls (9 + i) notitle
unset multiplot
