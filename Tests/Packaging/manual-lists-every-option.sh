#!/bin/sh
# The handwritten manual cannot go stale: each command that `PROGRAM --help` lists has a
# section in it (.Ss NAME), each option and argument that a command's --help lists has an
# entry (.It Fl -NAME for --NAME, .It Ar NAME for <NAME>), and each entry names an option that
# some command has.
# Usage: manual-lists-every-option.sh PROGRAM MANUAL
set -eu
program=$1 manual=$2
status=0

# The lines of one section (OPTIONS:, ARGUMENTS:, SUBCOMMANDS:) of a --help text.
section() { sed -n "/^$1:/,/^\$/p"; }

commands=$("$program" --help | section SUBCOMMANDS | sed -n 's/^  \([a-z][a-z-]*\).*/\1/p' | tr '\n' ' ')
[ -n "$commands" ] || { echo "$program --help lists no subcommands"; exit 1; }

all_options=""
for command in "" $commands; do
  help=$("$program" $command --help)
  name=${command:-fetched-results}
  if [ -n "$command" ] && ! grep -qx "\.Ss $command" "$manual"; then
    echo "$manual has no section '.Ss $command' for the command $command"
    status=1
  fi
  options=$(echo "$help" | section OPTIONS | grep -oE '^  (-[a-zA-Z], )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+' || true)
  for option in $options; do
    all_options="$all_options $option"
    # mdoc's Fl adds a hyphen: .Fl -store is --store.
    grep -qE "^\.It .*Fl ${option#-}( |\$)" "$manual" || {
      echo "$manual has no entry '.It Fl ${option#-}' for $option of $name"
      status=1
    }
  done
  arguments=$(echo "$help" | section ARGUMENTS | sed -n 's/^  <\([a-z0-9-]*\)>.*/\1/p')
  for argument in $arguments; do
    grep -qE "^\.It Ar $argument( |\$)" "$manual" || {
      echo "$manual has no entry '.It Ar $argument' for the argument <$argument> of $name"
      status=1
    }
  done
done

# The other way: no entry for an option that no command has any more.
for option in $(grep -E '^\.It ' "$manual" | grep -oE 'Fl -[a-z0-9-]+' | sed 's/^Fl /-/' | sort -u); do
  case " $all_options " in
    *" $option "*) ;;
    *) echo "$manual describes $option, which no command's --help lists"; status=1;;
  esac
done
for command in $(sed -n 's/^\.Ss //p' "$manual"); do
  case " help $commands " in
    *" $command "*) ;;
    *) echo "$manual has a section for the command $command, which $program --help does not list"; status=1;;
  esac
done
exit $status
