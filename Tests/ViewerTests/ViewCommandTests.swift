import Foundation
import XCTest

/// `fetched-results view`, the built executable run from outside: a screenshot option, a
/// machine without a display, and the window driven with xdotool and read back from a
/// screenshot and from the text the window writes with `--dump`.
final class ViewCommandTests: XCTestCase {
    private var executable: URL { builtExecutable("fetched-results", besides: ViewCommandTests.self) }

    private var hasDisplay: Bool { environmentNamesADisplay }

    private func launch(_ arguments: [String], environment changes: [String: String?] = [:]) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = try temporaryFolder(self).path
        environment["XDG_CONFIG_HOME"] = try temporaryFolder(self).path
        for (key, value) in changes { environment[key] = value }
        process.environment = environment
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        return (process, output, errors)
    }

    private func run(_ arguments: [String], environment: [String: String?] = [:]) throws -> (status: Int32, output: String, errors: String) {
        let (process, output, errors) = try launch(arguments, environment: environment)
        let out = output.fileHandleForReading.readDataToEndOfFile(), err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    /// A tool's standard output; nil when it is not installed or fails.
    private func tool(_ name: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [name] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }

    private func pngSize(_ url: URL) throws -> (width: Int, height: Int) {
        let png = try Data(contentsOf: url)
        XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "a PNG file")
        return (png[16..<20].reduce(0) { $0 << 8 | Int($1) }, png[20..<24].reduce(0) { $0 << 8 | Int($1) })
    }

    func testScreenshotOptionSavesTheWindowAndQuits() throws {
        guard hasDisplay else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let folder = try temporaryFolder(self)
        let picture = folder.appendingPathComponent("todo.png")
        let result = try run(["view", "--dataset", "todo", "--store", folder.appendingPathComponent("todo.sqlite").path,
                              "--screenshot", picture.path])
        XCTAssertEqual(result.status, 0, result.errors)
        XCTAssertEqual(result.output, "Screenshot: \(picture.path)\n")
        let size = try pngSize(picture)
        XCTAssertTrue(size.width > 800 && size.height > 600, "the window's size (900×640 less its frame): \(size)")
    }

    /// `--window-size 360x720 --color-scheme dark`: a phone-sized window in the dark style; a
    /// size below 360x300 is refused by name.
    func testWindowSizeAndColorSchemeOptions() throws {
        guard hasDisplay else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let folder = try temporaryFolder(self)
        let picture = folder.appendingPathComponent("narrow.png")
        let result = try run(["view", "--store", folder.appendingPathComponent("cup.sqlite").path, "--window-size", "360x720",
                              "--color-scheme", "dark", "--screenshot", picture.path])
        XCTAssertEqual(result.status, 0, result.errors)
        let size = try pngSize(picture)
        XCTAssertTrue((350...380).contains(size.width) && (690...730).contains(size.height), "360 × 720 less the frame: \(size)")
        if let pixel = tool("convert", [picture.path, "-format", "%[pixel:p{\(size.width / 2),\(size.height - 20)}]", "info:"]) {
            let rgb = pixel.split { !$0.isNumber }.compactMap { Int($0) }.prefix(3)
            XCTAssertTrue(rgb.count == 3 && rgb.allSatisfy { $0 < 80 }, "a dark list background: \(pixel)")
        }
        let refused = try run(["view", "--window-size", "200x100", "--screenshot", picture.path])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.errors.contains("--window-size takes WIDTHxHEIGHT"), refused.errors)
    }

    func testWithoutADisplayItStartsXvfbAndSavesAScreenshot() throws {
        guard tool("which", ["Xvfb"]) != nil else { throw XCTSkip("Xvfb is not installed (scripts/install-deps installs it)") }
        let folder = try temporaryFolder(self)
        // No arguments: the default command, on the World Cup.
        let result = try run([], environment: ["DISPLAY": nil, "WAYLAND_DISPLAY": nil, "TMPDIR": folder.path])
        XCTAssertEqual(result.status, 0, result.errors)
        let picture = folder.appendingPathComponent("fetched-results-worldcup.png")
        XCTAssertEqual(result.output, """
            No display: showing the window on a virtual display (Xvfb) and saving a screenshot.
            Screenshot: \(picture.path)

            """)
        XCTAssertGreaterThan(try pngSize(picture).width, 800)
    }

    /// The window opens as it was last closed: its size and the dataset it showed (run from the
    /// build tree, no schema installed: a key file in $XDG_CONFIG_HOME); --window-size and
    /// --dataset win over what was kept; a kept size below the window's minimum, or a dataset
    /// that does not exist, opens the defaults instead. (Xvfb has no window manager to resize
    /// the window by hand: the first launch gives its size with --window-size.)
    func testTheWindowOpensWithTheSizeAndDatasetItWasClosedWith() throws {
        guard hasDisplay, tool("which", ["xdotool"]) != nil else { throw XCTSkip("needs a display and xdotool (scripts/test, scripts/install-deps)") }
        if tool("gsettings", ["list-schemas"])?.contains("org.fetchedresults.Viewer") == true {
            throw XCTSkip("the viewer's GSettings schema is installed on this machine: the state would go to dconf, not the test's key file")
        }
        let folder = try temporaryFolder(self)
        let environment = ["XDG_CONFIG_HOME": folder.path, "XDG_DATA_HOME": folder.path]
        let dump = folder.appendingPathComponent("window.txt")
        func shown() -> String { (try? String(contentsOf: dump, encoding: .utf8)) ?? "" }
        func open(_ arguments: [String]) throws -> Process {
            try? FileManager.default.removeItem(at: dump)
            let (process, _, _) = try launch(["view", "--dump", dump.path] + arguments, environment: environment)
            let deadline = Date().addingTimeInterval(20)
            while !shown().contains("\nwindow @ ") && Date() < deadline && process.isRunning { usleep(50_000) }
            usleep(300_000)
            return process
        }
        func size() -> String? { shown().split(separator: "\n").first { $0.hasPrefix("window @ ") }.map { String($0.dropFirst("window @ 0 0 ".count)) } }

        let zeroth = try open([])
        XCTAssertEqual(size(), "900 640", "the default size at the first launch")
        zeroth.terminate()
        zeroth.waitUntilExit()
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("fetched-results/window.ini").path),
                       "killed, the window kept nothing")

        let first = try open(["--dataset", "movies", "--window-size", "700x520"])
        XCTAssertTrue(shown().hasPrefix("title: Movies"), shown())
        XCTAssertEqual(size(), "700 520")
        XCTAssertNotNil(tool("xdotool", ["mousemove", "300", "300", "key", "ctrl+w"]))
        first.waitUntilExit()
        let kept = try String(contentsOf: folder.appendingPathComponent("fetched-results/window.ini"), encoding: .utf8)
        XCTAssertTrue(kept.contains("width=700") && kept.contains("dataset=movies"), kept)

        let second = try open([])
        XCTAssertTrue(shown().hasPrefix("title: Movies"), "the last dataset:\n\(shown())")
        XCTAssertEqual(size(), "700 520", "the last size")
        second.terminate()
        second.waitUntilExit()

        let third = try open(["--dataset", "worldcup", "--window-size", "800x600"])
        XCTAssertTrue(shown().hasPrefix("title: World Cup"), shown())
        XCTAssertEqual(size(), "800 600", "the options win")
        third.terminate()
        third.waitUntilExit()

        try "[window]\nwidth=12\nheight=x\ndataset=nonesuch\n".write(to: folder.appendingPathComponent("fetched-results/window.ini"), atomically: true, encoding: .utf8)
        let fourth = try open([])
        XCTAssertTrue(shown().hasPrefix("title: World Cup"), "an unknown dataset opens the default:\n\(shown())")
        // The window's narrowest (360 px, and the margins GTK adds around it).
        let narrowest = size()?.split(separator: " ").compactMap { Int($0) } ?? []
        XCTAssertTrue(narrowest.count == 2 && (360...380).contains(narrowest[0]) && narrowest[1] == 640,
                      "too narrow a width opens at the minimum, a height that is no number at the default: \(size() ?? "no size")")
        fourth.terminate()
        fourth.waitUntilExit()
    }

    func testAPersonTapsATeamUntilItLeadsItsZoneEditsMovesDeletesUndoesAddsAndSearchesWithTheKeyboard() throws {
        guard hasDisplay else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        guard tool("which", ["xdotool"]) != nil, tool("which", ["import"]) != nil else {
            throw XCTSkip("xdotool and ImageMagick are not installed (scripts/install-deps installs them)")
        }
        let folder = try temporaryFolder(self)
        let store = folder.appendingPathComponent("cup.sqlite").path
        let dump = folder.appendingPathComponent("window.txt")
        let (process, _, errors) = try launch(["view", "--store", store, "--dump", dump.path])
        defer { if process.isRunning { process.terminate() } }

        func shown() -> String { (try? String(contentsOf: dump, encoding: .utf8)) ?? "" }
        func wait(until condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while !condition() {
                guard Date() < deadline, process.isRunning else { return false }
                usleep(50_000)
            }
            return true
        }
        func wait(for text: String) -> Bool { wait { shown().contains(text) } }
        /// The centre of a row, in screen coordinates (the window sits at 0,0 without a window manager).
        func centre(ofRow title: String) throws -> (x: Int, y: Int) {
            let line = try XCTUnwrap(shown().split(separator: "\n").first { $0.hasPrefix("\(title) @ ") }, "\(title) is shown")
            let numbers = line.split(separator: "@")[1].split(separator: " ").compactMap { Int($0) }
            return (numbers[0] + numbers[2] / 2, numbers[1] + numbers[3] / 2)
        }

        XCTAssertTrue(wait(for: "Ghana @ "), "the window shows its rows:\n\(shown())")
        let firstRow = try centre(ofRow: "Algeria")
        let ghana = try centre(ofRow: "Ghana")
        XCTAssertNotNil(tool("xdotool", ["mousemove", "\(ghana.x)", "\(ghana.y)", "click", "1"]))
        XCTAssertTrue(wait(for: "> Ghana · Wins: 0"), "a click selects:\n\(shown())")
        for wins in 1...3 {
            // A tap is a double-click on the row (wherever it moved), apart from the click
            // before: within the double-click time it would be a triple click, whose third
            // click selects the team that moved under the pointer.
            usleep(500_000)
            let row = try centre(ofRow: "Ghana")
            XCTAssertNotNil(tool("xdotool", ["mousemove", "\(row.x)", "\(row.y)", "click", "--repeat", "2", "--delay", "80", "1"]))
            XCTAssertTrue(wait(for: "> Ghana · Wins: \(wins)"), "a double-click adds a win to the team:\n\(shown())")
        }
        XCTAssertTrue(shown().contains("[Africa]\n> Ghana · Wins: 3\n  Algeria · Wins: 0\n"), shown())
        XCTAssertTrue(wait { (try? centre(ofRow: "Ghana")).map { $0 == firstRow } ?? false }, "the row moved to the top:\n\(shown())")

        // The screen: the selected row, now at the top of the list, is highlighted.
        let screen = folder.appendingPathComponent("screen.png")
        XCTAssertNotNil(tool("import", ["-window", "root", screen.path]))
        let top = try centre(ofRow: "Ghana")
        let pixel = try XCTUnwrap(tool("convert", [screen.path, "-format", "%[pixel:p{\(top.x),\(top.y)}]", "info:"]))
        let rgb = pixel.split { !$0.isNumber }.compactMap { Int($0) }
        XCTAssertEqual(rgb.count, 3, pixel)
        XCTAssertTrue(rgb.count == 3 && rgb[2] >= 170 && rgb[0] < 60 && rgb[1] < 120, "the selection's blue at the top row: \(pixel)")

        /// Waits up to 10 s until a window titled `title` (a dialog) is shown or gone.
        func waitForWindow(_ title: String, shown expected: Bool) -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while windowShown(title) != expected {
                guard Date() < deadline else { return false }
                usleep(100_000)
            }
            return true
        }

        // Enter edits the selected team (and adds no win); Escape cancels.
        XCTAssertNotNil(tool("xdotool", ["key", "Return"]))
        XCTAssertTrue(waitForWindow("Edit Team", shown: true), "Enter opens the Edit dialog")
        XCTAssertTrue(shown().contains("> Ghana · Wins: 3\n"), "no win added:\n\(shown())")
        XCTAssertNotNil(tool("xdotool", ["key", "Escape"]))
        XCTAssertTrue(waitForWindow("Edit Team", shown: false), "Escape closes the dialog")

        // The arrows move the selection.
        XCTAssertNotNil(tool("xdotool", ["key", "Down"]))
        XCTAssertTrue(wait(for: "  Ghana · Wins: 3\n> Algeria · Wins: 0\n"), "Down selects the next row:\n\(shown())")
        XCTAssertNotNil(tool("xdotool", ["key", "Up"]))
        XCTAssertTrue(wait(for: "> Ghana · Wins: 3\n  Algeria · Wins: 0\n"), "Up selects Ghana again:\n\(shown())")

        // Delete deletes the selected team, Ctrl+Z brings it back.
        XCTAssertNotNil(tool("xdotool", ["key", "Delete"]))
        XCTAssertTrue(wait(for: "toast: “Ghana” deleted"), shown())
        XCTAssertFalse(shown().contains("Ghana ·"))
        XCTAssertNotNil(tool("xdotool", ["key", "ctrl+z"]))
        XCTAssertTrue(wait(for: "[Africa]\n> Ghana · Wins: 3\n"), "Undo restores it:\n\(shown())")

        // Ctrl+N opens the Add dialog; Ctrl+F goes to the search entry.
        XCTAssertNotNil(tool("xdotool", ["key", "ctrl+n"]))
        XCTAssertTrue(waitForWindow("Add Team", shown: true), "Ctrl+N opens the Add dialog")
        XCTAssertNotNil(tool("xdotool", ["key", "Escape"]))
        XCTAssertTrue(waitForWindow("Add Team", shown: false))
        XCTAssertNotNil(tool("xdotool", ["key", "ctrl+f"]))
        XCTAssertNotNil(tool("xdotool", ["type", "--delay", "50", "ghan"]))
        XCTAssertTrue(wait { shown().contains("[Africa]\n> Ghana · Wins: 3\ndetail:") && !shown().contains("Algeria ·") },
                      "the search shows Ghana alone:\n\(shown())")

        XCTAssertNotNil(tool("xdotool", ["key", "ctrl+q"]))
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        let saved = try run(["dump", "--store", store])
        XCTAssertTrue(saved.output.contains(#""teamName":"Ghana","wins":3"#), "saved in the store")
    }

    /// The viewer and two other processes writing its store: `fetched-results apply` and the
    /// `sqlite3` shell. The window follows each commit, and ends showing what a fresh fetch
    /// (`dump`) shows; idle, it uses no measurable CPU.
    func testTheViewerFollowsApplyAndTheSqliteShellAndIdlesWithoutCPU() throws {
        guard hasDisplay else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let folder = try temporaryFolder(self)
        let store = folder.appendingPathComponent("cup.sqlite").path
        let dump = folder.appendingPathComponent("window.txt")
        let (viewer, _, errors) = try launch(["view", "--store", store, "--dump", dump.path])
        defer { if viewer.isRunning { viewer.terminate() } }
        func shown() -> String { (try? String(contentsOf: dump, encoding: .utf8)) ?? "" }
        func wait(until condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while !condition() {
                guard Date() < deadline, viewer.isRunning else { return false }
                usleep(20_000)
            }
            return true
        }
        func wait(for text: String) -> Bool { wait { shown().contains(text) } }
        XCTAssertTrue(wait(for: "Ghana @ "), "the window shows its rows:\n\(shown())")

        // Idle: the CPU time the viewer used in three seconds, from /proc.
        func cpuTicks() throws -> Int {
            let stat = try String(contentsOfFile: "/proc/\(viewer.processIdentifier)/stat", encoding: .utf8)
            let fields = stat[stat.range(of: ") ")!.upperBound...].split(separator: " ")
            return Int(fields[11])! + Int(fields[12])!  // utime, stime (fields 14 and 15 of stat)
        }
        usleep(500_000)
        let before = try cpuTicks()
        sleep(3)
        let idleTicks = try cpuTicks() - before
        let hertz = sysconf(Int32(_SC_CLK_TCK))
        print("idle viewer: \(idleTicks) clock ticks of CPU in 3 s (\(1000 * idleTicks / hertz) ms)")
        XCTAssertLessThanOrEqual(idleTicks * 1000 / hertz, 30, "an idle viewer (following its store) uses no measurable CPU: under 1% of a core")

        // `apply` in another process: a win for Ghana moves it to the top of Africa.
        let applyInput = Pipe()
        let writer = Process()
        writer.executableURL = executable
        writer.arguments = ["apply", "--dataset", "worldcup", "--store", store]
        writer.standardInput = applyInput
        writer.standardOutput = FileHandle.nullDevice
        try writer.run()
        applyInput.fileHandleForWriting.write(Data("""
            {"op":"update","entity":"Team","where":"teamName == 'Ghana'","set":{"wins":5}}
            {"op":"insert","entity":"Team","values":{"teamName":"Atlantis","qualifyingZone":"Oceania","wins":1}}
            {"op":"save"}

            """.utf8))
        try applyInput.fileHandleForWriting.close()
        writer.waitUntilExit()
        XCTAssertEqual(writer.terminationStatus, 0)
        XCTAssertTrue(wait(for: "[Africa]\n  Ghana · Wins: 5\n"), "apply's save shows:\n\(shown())")
        XCTAssertTrue(wait(for: "[Oceania]\n  Atlantis · Wins: 1\n"), "with a new section:\n\(shown())")

        // The sqlite3 shell, which knows nothing of our library: its triggers record the change.
        let shell = try XCTUnwrap(tool("sqlite3", ["-cmd", ".timeout 5000", store,
                                                   "UPDATE Team SET wins = 9 WHERE teamName = 'Brazil'; DELETE FROM Team WHERE qualifyingZone = 'Oceania';"]))
        XCTAssertEqual(shell, "")
        XCTAssertTrue(wait(for: "[South America]\n  Brazil · Wins: 9\n"), "the shell's update shows:\n\(shown())")
        XCTAssertTrue(wait { !shown().contains("[Oceania]") }, "the emptied section goes:\n\(shown())")

        // What the window shows equals a fresh fetch by another process.
        let fresh = try run(["dump", "--store", store])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(fresh.output.utf8)) as? [String: Any])
        var expected: [String] = []
        for section in try XCTUnwrap(json["sections"] as? [[String: Any]]) {
            expected.append("[\(section["name"] as! String)]")
            for object in section["objects"] as! [[String: Any]] {
                let values = object["values"] as! [String: Any]
                expected.append("\(values["teamName"] as! String) · Wins: \(values["wins"] as! Int)")
            }
        }
        let list = shown().split(separator: "\n").dropFirst().prefix { $0 != "detail:" }
            .map { $0.hasPrefix("[") ? String($0) : String($0.dropFirst(2)) }
        XCTAssertEqual(list, expected)

        viewer.terminate()
        viewer.waitUntilExit()
        XCTAssertFalse(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).contains("CRITICAL"))
    }

    /// Two desktops through PostgreSQL, each a process: the viewer sharing its store
    /// (`view --share`), and `apply --share` changing another store of the same database. The
    /// window shows the change and says it is shared; a store it shared with before shares
    /// again without the option. A URL that is not a server's is refused by name.
    func testTheViewerSharesThroughPostgreSQLWithAnotherDesktopsApply() throws {
        guard hasDisplay else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let refused = try run(["view", "--share", "http://me@db.example/league"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.errors.contains("--share: http://me@db.example/league is not a server address"), refused.errors)

        let url = try SharingServer.database(for: self)
        let folder = try temporaryFolder(self)
        let store = folder.appendingPathComponent("cup.sqlite").path
        let dump = folder.appendingPathComponent("window.txt")
        let (viewer, _, errors) = try launch(["view", "--store", store, "--share", url, "--dump", dump.path])
        defer { if viewer.isRunning { viewer.terminate() } }
        func shown() -> String { (try? String(contentsOf: dump, encoding: .utf8)) ?? "" }
        func wait(for text: String) -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while !shown().contains(text) {
                guard Date() < deadline, viewer.isRunning else { return false }
                usleep(20_000)
            }
            return true
        }
        let shared = "sharing: Shared through \(url)"
        XCTAssertTrue(wait(for: shared), "the window says it is shared:\n\(shown())")

        // Another desktop: apply on a store of its own, sharing the same database.
        let other = Process()
        other.executableURL = executable
        other.arguments = ["apply", "--store", folder.appendingPathComponent("other.sqlite").path, "--share", url]
        let input = Pipe()
        other.standardInput = input
        other.standardOutput = FileHandle.nullDevice
        other.standardError = FileHandle.nullDevice
        try other.run()
        input.fileHandleForWriting.write(Data("""
            {"op":"update","entity":"Team","where":"teamName == 'Ghana'","set":{"wins":5}}
            {"op":"save"}

            """.utf8))
        try input.fileHandleForWriting.close()
        other.waitUntilExit()
        XCTAssertEqual(other.terminationStatus, 0)
        XCTAssertTrue(wait(for: "[Africa]\n  Ghana · Wins: 5\n"), "the other desktop's change shows:\n\(shown())")
        XCTAssertTrue(shown().contains(shared), shown())
        viewer.terminate()
        viewer.waitUntilExit()
        XCTAssertFalse(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).contains("CRITICAL"))

        // The store remembers its server.
        try FileManager.default.removeItem(at: dump)
        let (again, _, _) = try launch(["view", "--store", store, "--dump", dump.path])
        defer { if again.isRunning { again.terminate() } }
        let deadline = Date().addingTimeInterval(20)
        while !shown().contains(shared), Date() < deadline, again.isRunning { usleep(20_000) }
        XCTAssertTrue(shown().contains(shared), "shared without --share:\n\(shown())")
    }
}
