#!/usr/bin/env bash
# The settings' documentation agrees with the rows of frontend/options/settings.def: README.md has
# one row per setting and none for an unknown one, with the row's default for the numeric
# settings other than LT_NUM_THREADS (whose default is the machine's core count) and the default
# word of the choice settings, and docs/DEBUGGING.md quotes the same defaults ("`LT_X` (default N").
set -u
root=${1:-.}
cd "$root" || exit 2
fail=0
rows=frontend/options/settings.def
# LT_SETTING(OptLevel, "LT_OPT_LEVEL", integer(0, 2, 2),  ->  LT_OPT_LEVEL Integer 2
# LT_SETTING(ShmStores, "LT_SHM_STORES", choice("auto|cached|streaming", "auto"),  ->  ... Choice auto
table=$(sed -nE \
  -e 's/^LT_SETTING\([A-Za-z]+, "(LT_[A-Z_]+)", integer\([^,]+, [^,]+, ([0-9]+)[,)].*/\1 Integer \2/p' \
  -e 's/^LT_SETTING\([A-Za-z]+, "(LT_[A-Z_]+)", on_off\(([0-9]+)\).*/\1 Switch \2/p' \
  -e 's/^LT_SETTING\([A-Za-z]+, "(LT_[A-Z_]+)", folder\(.*/\1 Folder -/p' \
  -e 's/^LT_SETTING\([A-Za-z]+, "(LT_[A-Z_]+)", path\(.*/\1 Path -/p' \
  -e 's/^LT_SETTING\([A-Za-z]+, "(LT_[A-Z_]+)", choice\("[a-z|]+", "([a-z]+)"\).*/\1 Choice \2/p' \
  "$rows")
[ -n "$table" ] || { echo "settings doc: no settings found in $rows"; exit 1; }
if [ "$(wc -l <<<"$table")" != "$(grep -c '^LT_SETTING(' "$rows")" ]; then
  echo "settings doc: a row of $rows is not in a form this script reads"
  exit 1
fi
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
      echo "settings doc: README.md gives $name the default $doc_default, settings.def $default"
      fail=1
    fi
  fi
  for quoted in $(grep -oE "\`$name\` \(default [0-9a-z]+" docs/DEBUGGING.md | grep -oE '[0-9a-z]+$'); do
    if [ "$quoted" != "$default" ]; then
      echo "settings doc: docs/DEBUGGING.md gives $name the default $quoted, settings.def $default"
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
