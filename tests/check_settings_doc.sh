#!/usr/bin/env bash
# The settings' documentation agrees with the table in frontend/options/table.h: README.md has one
# row per setting and none for an unknown one, with the table's default for the numeric settings
# other than LT_NUM_THREADS (whose default is the machine's core count) and the default word of
# the choice settings, and docs/DEBUGGING.md quotes the same defaults ("`LT_X` (default N").
set -u
root=${1:-.}
cd "$root" || exit 2
fail=0
# {"LT_OPT_LEVEL", Kind::Integer, 0, 2, 2, {}},  ->  LT_OPT_LEVEL Integer 2
# {"LT_SHM_STORES", Kind::Choice, 0, 2, 0, {}, "auto|cached|streaming"},  ->  ... Choice auto
table=$(sed -nE 's/^ *\{"(LT_[A-Z_]+)", Kind::([A-Za-z]+), [^,]+, [^,]+, ([0-9]+),.*/\1 \2 \3/p' \
  frontend/options/table.h)
while read -r name index words; do
  default=$(tr '|' '\n' <<<"$words" | sed -n "$((index + 1))p")
  table=$(sed -E "s/^$name Choice .*/$name Choice $default/" <<<"$table")
done < <(sed -nE 's/^ *\{"(LT_[A-Z_]+)", Kind::Choice, [^,]+, [^,]+, ([0-9]+),.*"([a-z|]+)"\},/\1 \2 \3/p' \
  frontend/options/table.h)
[ -n "$table" ] || { echo "settings doc: no settings found in frontend/options/table.h"; exit 1; }
while read -r name kind default; do
  row=$(grep -E "^\| \`$name\` \|" README.md)
  if [ -z "$row" ]; then
    echo "settings doc: README.md has no row for $name"
    fail=1
    continue
  fi
  if [ "$kind" != Folder ] && [ "$kind" != Path ] && [ "$name" != LT_NUM_THREADS ]; then
    doc_default=$(awk -F'|' '{gsub(/ /, "", $3); print $3}' <<<"$row")
    if [ "$doc_default" != "$default" ]; then
      echo "settings doc: README.md gives $name the default $doc_default, the table $default"
      fail=1
    fi
  fi
  for quoted in $(grep -oE "\`$name\` \(default [0-9a-z]+" docs/DEBUGGING.md | grep -oE '[0-9a-z]+$'); do
    if [ "$quoted" != "$default" ]; then
      echo "settings doc: docs/DEBUGGING.md gives $name the default $quoted, the table $default"
      fail=1
    fi
  done
done <<<"$table"
for name in $(grep -oE '^\| `LT_[A-Z_]+` \|' README.md | grep -oE 'LT_[A-Z_]+'); do
  if ! grep -q "^$name " <<<"$table"; then
    echo "settings doc: README.md lists $name, which is not a setting"
    fail=1
  fi
done
[ $fail -eq 0 ] && echo "settings doc: ok"
exit $fail
