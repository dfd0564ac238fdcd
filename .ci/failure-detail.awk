# Reads a tap log; for each test file that failed, prints what explains it: its comments, the
# subtests that failed and their YAML diagnostics (at most 80 lines a file). The tail of a long
# run is all some CI views keep, so .ci/run prints this last.
function flush(failed,   i, shown, inDiag) {
  if (failed) {
    shown = 0
    for (i = 1; i <= n && shown < 80; i++) {
      line = block[i]
      if (line ~ /^[ ]+---$/) inDiag = 1
      if (inDiag || line ~ /^[ ]+not ok / || line ~ /^[ ]+# / && line !~ /# (time=|Subtest)/) { print "  " line; shown++ }
      if (line ~ /^[ ]+\.\.\.$/) inDiag = 0
    }
  }
  n = 0
}
/^(not )?ok [0-9]+ - / { if ($0 ~ /^not ok/) print label $0; flush($0 ~ /^not ok/); next }
{ block[++n] = $0 }
