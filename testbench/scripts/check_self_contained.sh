#!/bin/sh
# Issue 12 finding 10: a clone of the repository alone builds and passes its tests. No tracked file
# of the build, the tests or the scripts may name the reference material beside the repository
# (the sibling folder named in $ref below, its vectors/ and vm/) or this machine's work tree. The
# names are assembled here, so this file does not contain them itself. Markdown is not checked: docs may
# say where something came from (testbench/vectors/README.md "Provenance").
# Usage: check_self_contained.sh SOURCE_DIR
set -u
cd "$1" || exit 2
ref=shar"ed"        # the sibling folder of reference material
work=/wor"k"/       # this machine's work tree
pattern="\\.\\./$ref|$work|$ref/vectors|$ref/vm|NAA_SHARED"
self=testbench/scripts/check_self_contained.sh
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  list() { git ls-files; }
else  # a plain copy of the tree
  list() { find . -type f -not -path './build*' -not -path './.git/*' | sed 's|^\./||'; }
fi
hits=$(list | grep -v -e '\.md$' -e "^$self\$" | while IFS= read -r f; do
  [ -f "$f" ] && grep -InE "$pattern" "$f" /dev/null
done)
if [ -n "$hits" ]; then
  echo "these lines read or name ../$ref (or $work): move what they need into the repository"
  echo "$hits"
  exit 1
fi
echo "self-contained: $(list | wc -l) tracked files checked, none reads ../$ref"
