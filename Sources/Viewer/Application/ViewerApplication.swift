import CAdw
import CGtk
import Datasets
import GtkBinding
import Foundation

/// The viewer as a GTK application: one window on a dataset (``ViewerWindow``), the
/// Dispatch main queue running in the GLib main loop.
///
/// ```swift
/// let status = try ViewerApplication(options: ViewerOptions(datasetName: "movies")).run()
/// ```
///
/// ## Topics
/// - ``applicationID``
/// - ``run()``
/// - ``openWindow()``
@MainActor package final class ViewerApplication {
    /// The application ID: the `.desktop` file, icons and D-Bus name are named after it.
    /// An installed build reads it from `share/fetched-results/application-id` beside its
    /// `bin` (meson writes `org.fetchedresults.Viewer.Devel` for the development profile);
    /// a build run from the source tree is `org.fetchedresults.Viewer`.
    package static let applicationID: String = {
        let executable = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        let file = executable.resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("../share/fetched-results/application-id")
        let text = (try? String(contentsOf: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return text.isEmpty ? "org.fetchedresults.Viewer" : text
    }()

    package let options: ViewerOptions
    /// The `AdwApplication` (a `GtkApplication`).
    package let application: UnsafeMutablePointer<GtkApplication>
    /// The open windows.
    package private(set) var windows: [ViewerWindow] = []
    private var failure: (any Error)?

    package init(options: ViewerOptions) {
        self.options = options
        // Not unique: a second `view --dataset movies` opens its own window on its own store
        // instead of handing its options to a running instance that would ignore them.
        // An AdwApplication: libadwaita's styles, dark mode and the app's own CSS.
        application = UnsafeMutableRawPointer(adw_application_new(Self.applicationID, G_APPLICATION_NON_UNIQUE))
            .assumingMemoryBound(to: GtkApplication.self)
        Signal.connect(UnsafeMutableRawPointer(application), "activate") { [weak self] in self?.activate() }
    }

    isolated deinit { g_object_unref(UnsafeMutableRawPointer(application)) }

    private var gApplication: UnsafeMutablePointer<GApplication> {
        UnsafeMutableRawPointer(application).assumingMemoryBound(to: GApplication.self)
    }

    /// Runs until the last window closes (or, with ``ViewerOptions/screenshotURL``, until the
    /// picture is saved). Returns the exit status; throws what kept the window from opening.
    package func run() throws -> Int32 {
        MainQueueSource.attach()
        let status = g_application_run(gApplication, 0, nil)
        if let failure { throw failure }
        return status
    }

    /// Registers the application without running its main loop, for tests that iterate the
    /// loop themselves.
    package func register() throws {
        MainQueueSource.attach()
        var error: UnsafeMutablePointer<GError>?
        if g_application_register(gApplication, nil, &error) == 0 {
            defer { g_error_free(error) }
            throw ViewerError("cannot register the application: \(String(cString: error!.pointee.message))")
        }
    }

    /// Opens and presents a window on ``options``.
    @discardableResult
    package func openWindow() throws -> ViewerWindow {
        var options = self.options
        let state = options.remembersWindow ? WindowState.load() : nil
        if let state {
            options.windowSize = options.windowSize ?? (max(state.width, 360), max(state.height, 300))
            if options.reopensLastDataset, let last = state.dataset, Dataset.shipped.contains(last) { options.datasetName = last }
        }
        let window = try ViewerWindow(application: application, options: options)
        if let state {
            if state.isMaximized { gtk_window_maximize(window.window.cast()) }
            Signal.connect(window.window.object, "close-request") { [weak window] () -> Bool in
                window?.keepState()
                return false
            }
        }
        windows.append(window)
        Signal.connect(window.window.object, "destroy") { [weak self, weak window] in
            self?.windows.removeAll { $0 === window }
        }
        if let dumpURL = options.dumpURL { writeDumps(of: window, to: dumpURL) }
        gtk_window_present(window.window.cast())
        if let url = options.screenshotURL { saveScreenshot(of: window, to: url, after: 700) }
        return window
    }

    /// Saves a picture of `window` once GTK has laid it out and drawn it, with its rows (a
    /// window whose rows are still being fetched is waited for), then quits.
    private func saveScreenshot(of window: ViewerWindow, to url: URL, after milliseconds: UInt32) {
        MainLoop.after(milliseconds: milliseconds) { [weak self, weak window] in
            guard let self, let window else { return }
            if window.isLoading { return self.saveScreenshot(of: window, to: url, after: 300) }
            do { try Screenshot.save(window.window, to: url) } catch { self.failure = error }
            g_application_quit(self.gApplication)
        }
    }

    /// Writes what `window` shows, and where its rows are, after every frame that changed it.
    private func writeDumps(of window: ViewerWindow, to url: URL) {
        var written = ""
        Signal.connect(window.window.object, "realize") { [weak window] in
            guard let clock = window.flatMap({ gtk_widget_get_frame_clock($0.window) }) else { return }
            Signal.connect(UnsafeMutableRawPointer(clock), "after-paint") { [weak window] in
                guard let window else { return }
                let text = window.textDump + "\nlayout:\n" + window.layoutDump + "\n"
                guard text != written else { return }
                written = text
                try? Data(text.utf8).write(to: url, options: .atomic)
            }
        }
    }

    private func activate() {
        if let window = windows.first { return gtk_window_present(window.window.cast()) }
        do {
            try openWindow()
        } catch {
            failure = error
            g_application_quit(gApplication)
        }
    }
}
