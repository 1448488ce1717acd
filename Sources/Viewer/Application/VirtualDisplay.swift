import Foundation

/// An Xvfb X server started for a machine without a display, so that the viewer can still
/// show its window (and save a picture of it).
nonisolated package final class VirtualDisplay {
    /// The display name, such as `:99`, which ``start()`` also sets as `DISPLAY`.
    package let name: String
    private let process: Process

    /// Whether the process has a display to show windows on (X11 or Wayland).
    package static var isAvailable: Bool {
        let environment = ProcessInfo.processInfo.environment
        return !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    private init(name: String, process: Process) {
        self.name = name
        self.process = process
    }

    /// Starts Xvfb on a free display number and sets `DISPLAY` (and `GDK_BACKEND=x11`) for this process.
    package static func start(width: Int = 1280, height: Int = 800) throws -> VirtualDisplay {
        guard let xvfb = executable(named: "Xvfb") else {
            throw ViewerError("there is no display and Xvfb is not installed: run scripts/install-deps (or apt-get install xvfb), or set DISPLAY")
        }
        let process = Process()
        process.executableURL = xvfb
        // -displayfd: Xvfb picks a free display number and writes it to standard output when ready.
        process.arguments = ["-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var number = ""
        while !number.hasSuffix("\n") {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard !byte.isEmpty else {
                process.waitUntilExit()
                throw ViewerError("Xvfb stopped before it was ready (status \(process.terminationStatus))")
            }
            number += String(decoding: byte, as: UTF8.self)
        }
        let name = ":" + number.trimmingCharacters(in: .whitespacesAndNewlines)
        setenv("DISPLAY", name, 1)
        setenv("GDK_BACKEND", "x11", 1)
        unsetenv("WAYLAND_DISPLAY")
        return VirtualDisplay(name: name, process: process)
    }

    /// Stops the X server.
    package func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit { stop() }

    private static func executable(named name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
