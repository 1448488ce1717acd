#!/usr/bin/python3
"""Lists what a screen reader sees of a running program: its AT-SPI tree, one line an
accessible ("ROLE 'NAME'", indented by depth, with "labelled-by 'LABEL'" when a relation
names it), read from outside through the accessibility bus.

Usage: atspi_tree.py [--click NAME] -- COMMAND [ARGUMENT...]

Starts COMMAND, waits until its window shows a named list item, prints the tree, and with
--click presses the push button named NAME (its first action) and prints the tree again
once a second window (a dialog) is open. Then ends COMMAND. Run it inside
`dbus-run-session` (the session bus starts the accessibility bus, at-spi2-core's
at-spi-bus-launcher, when the program asks for it), on a display of its own
(`xvfb-run -a`): the launcher leaves the bus's address on the root window.
"""
import os
import subprocess
import sys
import time

import pyatspi


def lines(accessible, depth=0):
    """The tree under `accessible`, one line an accessible."""
    text = f"{'  ' * depth}{accessible.getRoleName()} {accessible.name!r}"
    for relation in accessible.getRelationSet():
        if relation.getRelationType() == pyatspi.RELATION_LABELLED_BY:
            targets = [relation.getTarget(i) for i in range(relation.getNTargets())]
            text += "".join(f" labelled-by {target.name!r}" for target in targets if target is not None)
    yield text
    for index in range(accessible.childCount):
        child = accessible.getChildAtIndex(index)
        if child is not None:
            yield from lines(child, depth + 1)


def application():
    """The program's application accessible, once it has a window; else None."""
    desktop = pyatspi.Registry.getDesktop(0)
    for index in range(desktop.childCount):
        app = desktop.getChildAtIndex(index)
        if app is not None and app.childCount > 0:
            return app
    return None


def shows_rows(app):
    """Whether the list shows its rows: a list item with a name."""
    return any(line.lstrip().startswith("list item '") and not line.endswith("''") for line in lines(app))


def wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            result = condition()
        except Exception:  # the tree changes while it is read
            result = None
        if result:
            return result
        time.sleep(0.2)
    sys.exit(f"atspi_tree: timed out waiting for {what}")


def find(accessible, role, name):
    if accessible.getRoleName() == role and accessible.name == name:
        return accessible
    for index in range(accessible.childCount):
        child = accessible.getChildAtIndex(index)
        found = child is not None and find(child, role, name)
        if found:
            return found
    return None


def main():
    arguments = sys.argv[1:]
    click = None
    if arguments[:1] == ["--click"]:
        click, arguments = arguments[1], arguments[2:]
    if arguments[:1] != ["--"] or len(arguments) < 2:
        sys.exit(__doc__)
    # Starts the accessibility bus and its registry first, and waits: the bus launcher opens
    # the display to publish the bus's address, and when it closes it, a server with no other
    # client (Xvfb under xvfb-run) resets; a program opening the display then fails.
    pyatspi.Registry.getDesktop(0)
    time.sleep(1)
    program = subprocess.Popen(arguments[1:], env=dict(os.environ, GTK_A11Y="atspi"))
    try:
        app = wait_for(lambda: (app := application()) and shows_rows(app) and app, 30, "a named list item")
        print("\n".join(lines(app)), flush=True)
        if click:
            button = wait_for(lambda: find(app, "push button", click), 5, f"a push button {click!r}")
            button.queryAction().doAction(0)
            wait_for(lambda: app.childCount > 1, 10, "a second window")
            time.sleep(0.5)  # its widgets are laid out and named
            print("== after clicking", click)
            print("\n".join(lines(app.getChildAtIndex(app.childCount - 1))), flush=True)
    finally:
        program.terminate()
        program.wait(timeout=10)


if __name__ == "__main__":
    main()
