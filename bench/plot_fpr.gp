# docs/fpr-vs-bits.svg: measured false-positive rate against bits per key for the filter family,
# beside the classic filter's theory and the information-theoretic bound. Data: the output of
# bloomery-fpr-sweep (block 0 the theory curve, then one block per filter, each headed by its name).
# Left panel: 2-26 bits per key, where all but the counting and the grown scalable filter lie;
# right panel: the whole range.
#
#   gnuplot -e "data='fpr_sweep.dat'; out='docs/fpr-vs-bits.svg'" bench/plot_fpr.gp
# (bench/plot.sh runs the sweep and this script.)
if (!exists("data")) data = 'build-bench/results/fpr_sweep.dat'
if (!exists("out")) out = 'docs/fpr-vs-bits.svg'
if (!exists("subtitle")) subtitle = ''
if (!exists("term")) term = 'svg'

if (term eq 'svg') {
  set terminal svg size 1100,700 dynamic enhanced font 'Helvetica,14' background rgb 'white'
} else {
  set terminal pngcairo size 1100,700 enhanced font 'Helvetica,12' background rgb 'white'
}
set output out
set encoding utf8

stats data using 1 nooutput
blocks = STATS_blocks

set style line 1 lc rgb '#000000' lw 2          # classic theory
set style line 2 lc rgb '#888888' lw 2 dt 2     # information-theoretic bound
set style line 11 lc rgb '#1f77b4' lw 1.5 pt 7 ps 0.9
set style line 12 lc rgb '#ff7f0e' lw 1.5 pt 5 ps 0.9
set style line 13 lc rgb '#2ca02c' lw 1.5 pt 9 ps 1.1
set style line 14 lc rgb '#d62728' lw 1.5 pt 11 ps 1.1
set style line 15 lc rgb '#9467bd' lw 1.5 pt 13 ps 1.0
set style line 16 lc rgb '#8c564b' lw 1.5 pt 4 ps 0.9
set style line 17 lc rgb '#e377c2' lw 1.5 pt 15 ps 1.3
set style line 18 lc rgb '#17becf' lw 1.5 pt 6 ps 0.9
set style line 19 lc rgb '#bcbd22' lw 1.5 pt 8 ps 0.9
set style line 20 lc rgb '#7f7f7f' lw 1.5 pt 10 ps 0.9

set multiplot title "False-positive rate against memory\n{/*0.75 ".subtitle."}"
set logscale y
set format y '10^{%L}'
set yrange [5e-6:0.3]
set grid xtics ytics mxtics lc rgb '#dddddd' lw 1, lc rgb '#eeeeee' lw 1
set border lc rgb '#444444'
set ylabel 'false-positive rate (log scale)'
set xlabel 'bits per key  (8 · size\_in\_bytes() / n)'
set samples 500

# Left: the region where the filters compete.
set origin 0, 0.17
set size 0.64, 0.75
set xrange [2:26]
set xtics 2
set mxtics 2
set key at screen 0.06, 0.14 left top vertical Left reverse maxrows 4 samplen 2.5 spacing 1.25 font ',12'
plot data index 0 using 1:2 with lines ls 1 title 'classic Bloom, theory (optimal integer k)', \
     2**(-x) with lines ls 2 title 'lower bound, log_2(1/p) bits/key', \
     for [i=1:blocks-1] data index i using 1:2 with linespoints ls (10 + i) title columnheader(1)

# Right: everything.
unset key
unset ylabel
set origin 0.63, 0.17
set size 0.37, 0.75
set xrange [0:80]
set xtics 10
set mxtics 2
set label 1 'whole range' at graph 0.96, 0.95 right font ',12'
plot data index 0 using 1:2 with lines ls 1 notitle, \
     2**(-x) with lines ls 2 notitle, \
     for [i=1:blocks-1] data index i using 1:2 with linespoints ls (10 + i) notitle
unset multiplot
