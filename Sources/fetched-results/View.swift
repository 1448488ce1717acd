import ArgumentParser
import Foundation
import Viewer

/// `view` (the default): the GTK window on a dataset. Without a display it runs the window on
/// a virtual one (Xvfb) and saves a picture of it instead.
struct View: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open the viewer window on a dataset (the default command).",
        discussion: """
            Without a display (no DISPLAY or WAYLAND_DISPLAY), the window is shown on a virtual \
            X server (Xvfb) and saved as a PNG screenshot whose path is printed. A store that \
            shares (--share) shows how it stands with its server in the header bar. The window \
            opens with the size and on the dataset it had when it was last closed, unless \
            --window-size, --dataset or --store says otherwise.
            """)

    @OptionGroup var options: DatasetOptions

    @OptionGroup var sharing: SharingOptions

    @Option(help: "Save a picture of the window to this PNG file once it is shown, then quit.")
    var screenshot: String?

    @Option(help: ArgumentHelp("The window's size, as WIDTHxHEIGHT in pixels (at least 360x300).", valueName: "size"))
    var windowSize: String?

    @Option(help: "Light or dark style: system (follow the desktop's setting), light or dark.")
    var colorScheme: ColorScheme = .system

    @Option(help: ArgumentHelp("Write what the window shows as text to this file after every change.", visibility: .hidden))
    var dump: String?

    func validate() throws {
        if let windowSize, Self.size(windowSize) == nil {
            throw ValidationError("--window-size takes WIDTHxHEIGHT in pixels, at least 360x300, such as 1280x800: not \(windowSize)")
        }
    }

    /// "1280x800" as numbers; nil when it is not a size of at least 360 by 300.
    static func size(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 360, parts[1] >= 300, parts[0] <= 16384, parts[1] <= 16384 else { return nil }
        return (parts[0], parts[1])
    }

    func run() throws {
        var screenshotURL = screenshot.map { URL(fileURLWithPath: $0) }
        var display: VirtualDisplay?
        if !VirtualDisplay.isAvailable {
            print("No display: showing the window on a virtual display (Xvfb) and saving a screenshot.")
            display = try VirtualDisplay.start()
            screenshotURL = screenshotURL ?? FileManager.default.temporaryDirectory
                .appendingPathComponent("fetched-results-\(options.dataset).png")
        }
        defer { display?.stop() }
        var viewerOptions = ViewerOptions(
            datasetName: options.dataset, storeURL: options.store.map { URL(fileURLWithPath: $0) },
            screenshotURL: screenshotURL, dumpURL: dump.map { URL(fileURLWithPath: $0) }, busyTimeout: options.busyTimeout,
            windowSize: windowSize.flatMap(Self.size), colorScheme: colorScheme.viewerValue,
            shareURL: sharing.share, unshare: sharing.unshare)
        // A window for a person (not a screenshot) opens as it was last closed, on the dataset
        // it showed unless one (or a store) is asked for.
        viewerOptions.remembersWindow = screenshotURL == nil
        let asked = CommandLine.arguments.contains { ["--dataset", "--store"].contains($0.split(separator: "=").first.map(String.init)) }
        viewerOptions.reopensLastDataset = !asked
        // A command runs on the main thread, where GTK (and the viewer's every declaration) runs.
        let status = try MainActor.assumeIsolated { try ViewerApplication(options: viewerOptions).run() }
        guard status == 0 else { throw ExitCode(status) }
        if let screenshotURL { print("Screenshot: \(screenshotURL.path)") }
    }
}

/// `--color-scheme`.
enum ColorScheme: String, ExpressibleByArgument, CaseIterable {
    case system, light, dark

    var viewerValue: ViewerOptions.ColorScheme {
        switch self {
        case .system: .system
        case .light: .light
        case .dark: .dark
        }
    }
}
