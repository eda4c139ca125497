# Sourced by the bench scripts: timing samples in $work/samples, one line per run.
# measure LABEL CMD...: runs CMD (output discarded) under /usr/bin/time and appends
# "LABEL wall_s rss_kb user_s sys_s"; a failing CMD ends the benchmark with its stderr.
measure() {
  label=$1
  shift
  /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
    echo "bench: $label failed:" >&2
    cat "$work/err" >&2
    exit 1
  }
  echo "$label $(tail -n 1 "$work/time")" >>"$work/samples"
}

# median LABEL FIELD(2=wall,3=rss,cpu=user+sys)
median() {
  awk -v l="$1" -v f="$2" '$1 == l { print (f == "cpu" ? $4 + $5 : $f) }' "$work/samples" | sort -n |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
