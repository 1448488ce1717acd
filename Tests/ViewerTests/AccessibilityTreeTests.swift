import Foundation
import XCTest

/// What a screen reader reads: the running viewer's AT-SPI tree, listed from outside by
/// Tests/Accessibility/atspi_tree.py (python3-pyatspi) on a private session bus, where
/// at-spi2-core's bus launcher starts the accessibility bus, and on a display of its own:
/// the launcher leaves the bus's address on the display's root window, and GTK programs
/// started there later would try that bus once it is gone (a critical warning).
final class AccessibilityTreeTests: XCTestCase {
    private var script: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Accessibility/atspi_tree.py")
    }

    /// Skips unless there is a display and the AT-SPI tools are installed (scripts/install-deps installs them).
    private func requireTools() throws {
        guard environmentNamesADisplay else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        for path in ["/usr/bin/python3", "/usr/bin/xvfb-run", "/usr/bin/dbus-run-session", "/usr/libexec/at-spi-bus-launcher"] where !FileManager.default.isExecutableFile(atPath: path) {
            throw XCTSkip("\(path) is missing: scripts/install-deps installs at-spi2-core and python3-pyatspi")
        }
        guard try run("/usr/bin/python3", ["-c", "import pyatspi"]).status == 0 else { throw XCTSkip("python3-pyatspi is not installed") }
    }

    private func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = try temporaryFolder(self).path
        environment["XDG_CONFIG_HOME"] = try temporaryFolder(self).path
        process.environment = environment
        // One pipe for both: a failure shows why among what was listed.
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// The tree of `fetched-results view` on `dataset`, then (with `click`) of the window
    /// that pressing the button named so opens; one accessible a line, without indentation.
    /// `arguments` go to `view` after the store.
    private func tree(_ dataset: String, clicking click: String, arguments: [String] = []) throws -> (window: [String], dialog: [String]) {
        let store = try temporaryFolder(self).appendingPathComponent("\(dataset).sqlite")
        let executable = builtExecutable("fetched-results", besides: AccessibilityTreeTests.self)
        let result = try run("/usr/bin/xvfb-run", ["-a", "-s", "-screen 0 1280x1024x24", "/usr/bin/dbus-run-session", "--",
                                                   "/usr/bin/python3", script.path, "--click", click, "--",
                                                   executable.path, "view", "--dataset", dataset, "--store", store.path] + arguments)
        XCTAssertEqual(result.status, 0, result.output)
        let lines = result.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let separator = lines.firstIndex(of: "== after clicking \(click)") ?? lines.endIndex
        return (Array(lines[..<separator]), Array(lines[separator...].dropFirst()))
    }

    func testTheWorldCupWindowReadsAsSentencesWithNamedButtonsAndLabelledValues() throws {
        try requireTools()
        let (window, dialog) = try tree("worldcup", clicking: "Add")
        for line in [
            "list item 'Ghana, Wins: 0'",  // a row: one sentence from its title and subtitle
            "push button 'Add a win to Ghana'",  // the counter, from view.json's counterLabel
            "heading 'Africa'",  // section headers
            "heading 'Algeria'",  // the detail pane's title
            "combo box 'Dataset'", "push button 'Search'", "push button 'Main Menu'",  // the sort orders and Import are in the menu
            "entry 'Search'",
            "push button 'Add'", "push button 'Edit'", "push button 'Delete'", "push button 'Undo'",
        ] {
            XCTAssertTrue(window.contains { $0 == line || $0.hasPrefix(line + " ") }, "\(line) in:\n\(window.joined(separator: "\n"))")
        }
        XCTAssertFalse(window.contains("label 'G'"), "the avatar's initials are hidden: the row's sentence has the name")
        // The detail pane's values (Algeria is selected) read with their names, name first;
        // the names are not read again on their own.
        XCTAssertTrue(window.contains("label 'Team name: Algeria'"), window.joined(separator: "\n"))
        XCTAssertTrue(window.contains("label 'Qualifying zone: Africa'"), window.joined(separator: "\n"))
        XCTAssertFalse(window.contains("label 'Team name'"), window.joined(separator: "\n"))
        // The list reads as the dataset; no node reads as a widget class (GTK 4.8 names a
        // nameless node by its class: "AdwGizmo", "GtkImage", "GtkScrollbar").
        XCTAssertTrue(window.contains("list 'World Cup'"), window.joined(separator: "\n"))
        try assertNoWidgetClassIsRead(window + dialog)
        XCTAssertTrue(window.contains("panel 'Rows'"), window.joined(separator: "\n"))
        for line in ["frame 'Add Team'", "text 'Team name' labelled-by 'Team name'", "combo box 'Qualifying zone' labelled-by 'Qualifying zone'",
                     "push button 'Cancel'", "push button 'Add'"] {
            XCTAssertTrue(dialog.contains { $0 == line || $0.hasPrefix(line + " ") }, "\(line) in:\n\(dialog.joined(separator: "\n"))")
        }
    }

    func testAToDoCheckBoxSaysWhatItChecksAndTheListChoiceHasItsLabel() throws {
        try requireTools()
        let (window, dialog) = try tree("todo", clicking: "Add")
        for line in ["list item 'Milk'", "check box 'Done: Milk'", "heading 'Home'"] {
            XCTAssertTrue(window.contains(line), "\(line) in:\n\(window.joined(separator: "\n"))")
        }
        XCTAssertTrue(dialog.contains { $0.hasPrefix("combo box 'List' labelled-by 'List'") }, dialog.joined(separator: "\n"))
        // Each list's header menu says whose it is.
        XCTAssertTrue(window.contains { $0.contains("'List menu: Home'") }, window.joined(separator: "\n"))
        // The check boxes' own boxes and the List choice's inner parts included.
        try assertNoWidgetClassIsRead(window + dialog)
    }

    /// No line reads a widget class: GTK 4.8 names a nameless node by its class
    /// ("AdwGizmo", "GtkImage", "GtkScrollbar").
    private func assertNoWidgetClassIsRead(_ lines: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let className = try NSRegularExpression(pattern: "'(Gtk|Adw)[A-Z][A-Za-z]*'")
        for text in lines {
            XCTAssertNil(className.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)), "a widget class is read: \(text)", file: file, line: line)
        }
    }

    func testTheSharingIndicatorSaysHowTheStoreStandsWithItsServer() throws {
        try requireTools()
        // Nothing listens there: the store is offline with its seed waiting (or, at first, connecting).
        let url = try SharingServer.closedPortURL()
        let (window, _) = try tree("worldcup", clicking: "Add", arguments: ["--share", url])
        XCTAssertTrue(window.contains { $0.hasPrefix("push button 'Offline, 32 changes waiting'") || $0.hasPrefix("push button 'Connecting to \(url)…'") },
                      window.joined(separator: "\n"))
    }
}
