import CGtk
import GtkBinding
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest
@_exported import TestSupport

/// In-process tests of the real window: one registered GtkApplication for the test process,
/// a window per test on stores in a temporary folder. Needs a display (scripts/test runs the
/// tests under Xvfb); skipped without one.
class ViewerTestCase: XCTestCase, @unchecked Sendable {
    nonisolated(unsafe) private(set) static var application: ViewerApplication?
    private(set) var storeFolder: URL!
    var windows: [ViewerWindow] = []

    /// Whether GTK opened a display: asked once, since GTK 4.8 crashes when asked again
    /// after it could not.
    private static let hasDisplay = environmentNamesADisplay && gtk_init_check() != 0

    override func setUpWithError() throws { try MainActor.assumeIsolated {
        guard Self.hasDisplay else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        if Self.application == nil {
            let application = ViewerApplication(options: ViewerOptions())
            try application.register()
            Self.application = application
        }
        storeFolder = try temporaryFolder(self)
    } }

    override func tearDown() { MainActor.assumeIsolated {
        for window in windows { gtk_window_destroy(window.window.cast()) }
        windows = []
        MainLoop.iterate(for: 0.05)
    } }

    /// A shown window on `dataset`, its rows in, laid out and drawn; with `waiting` false,
    /// presented only, the main loop not run yet. `shareURL` is `--share`'s; `folder` holds
    /// the store (the test's ``storeFolder`` when nil: another desktop's has another).
    @MainActor func openWindow(_ dataset: String = "worldcup", busyTimeout: TimeInterval = PersistentStore.defaultBusyTimeout,
                               waiting: Bool = true, shareURL: String? = nil, storeFolder folder: URL? = nil) throws -> ViewerWindow {
        let window = try ViewerWindow(application: Self.application!.application,
                                      options: ViewerOptions(datasetName: dataset, storeFolder: folder ?? storeFolder, busyTimeout: busyTimeout, shareURL: shareURL))
        windows.append(window)
        gtk_window_present(window.window.cast())
        guard waiting else { return window }
        MainLoop.iterate(until: { gtk_widget_get_mapped(window.listView) != 0 && !window.isLoading })
        MainLoop.iterate(for: 0.2)
        return window
    }
}

@MainActor extension ViewerWindow {
    /// The lines of ``textDump`` before the detail pane: headers in brackets, then rows.
    var listLines: [String] {
        Array(textDump.split(separator: "\n").map(String.init).dropFirst().prefix { $0 != "detail:" && !$0.hasPrefix("toast: ") })
    }

    /// The detail pane's lines.
    var detailLines: [String] {
        detail.text.split(separator: "\n").map(String.init)
    }

    /// The rows of a section, as `listLines` shows them (the selected one starts with `>`).
    @MainActor func rows(inSection title: String) -> [String] {
        Array(listLines.drop { $0 != "[\(title)]" && !$0.hasPrefix("[\(title)] (") }.dropFirst().prefix { !$0.hasPrefix("[") })
    }

    /// The list position of the row whose title is `title`.
    @MainActor func position(ofRowTitled title: String) -> Int? {
        guard let session else { return nil }
        return (0..<session.rows.count).first { position in
            session.object(atPosition: position).map { ViewConfiguration.render(session.view.row.title, for: $0) } == title
        }
    }

    /// The object shown by the row titled `title`.
    @MainActor func object(titled title: String) -> ManagedObject? {
        position(ofRowTitled: title).flatMap { session?.object(atPosition: $0) }
    }

    /// Activates the row as a double-click does (GtkListView's `list.activate-item`): a tap.
    @MainActor func activateRow(titled title: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let position = position(ofRowTitled: title) else { return XCTFail("no row \(title)", file: file, line: line) }
        gtk_widget_activate_action_variant(listView, "list.activate-item", g_variant_new_uint32(guint32(position)))
        MainLoop.iterate(for: 0.1)
    }

    /// The texts of the labels GTK shows now under `widget` with CSS class `cssClass`.
    @MainActor func shownTexts(withClass cssClass: String) -> [String] {
        listView.descendants.filter {
            gtk_widget_has_css_class($0, cssClass) != 0 && gtk_widget_is_visible($0) != 0 && gtk_widget_get_mapped($0) != 0
        }.map(labelText)
    }
}

/// Emits GtkEventControllerKey's `key-pressed` on `controller` as GTK does for a key press
/// (`g_signal_emit_by_name` is variadic, so through `g_signal_emitv`); returns whether a
/// handler took the key.
@MainActor func pressKey(_ keyval: Int32, modifiers: GdkModifierType = GdkModifierType(rawValue: 0), on controller: OpaquePointer) -> Bool {
    let uintType = GType(7 << 2), booleanType = GType(5 << 2)  // G_TYPE_UINT, G_TYPE_BOOLEAN
    var values = [GValue](repeating: GValue(), count: 4)
    g_value_init(&values[0], gtk_event_controller_key_get_type())
    g_value_set_object(&values[0], UnsafeMutableRawPointer(controller))
    g_value_init(&values[1], uintType)
    g_value_set_uint(&values[1], guint(keyval))
    g_value_init(&values[2], uintType)
    g_value_set_uint(&values[2], 0)
    g_value_init(&values[3], gdk_modifier_type_get_type())
    g_value_set_flags(&values[3], modifiers.rawValue)
    var result = GValue()
    g_value_init(&result, booleanType)
    g_signal_emitv(values, g_signal_lookup("key-pressed", gtk_event_controller_key_get_type()), 0, &result)
    let handled = g_value_get_boolean(&result) != 0
    for index in values.indices { g_value_unset(&values[index]) }
    g_value_unset(&result)
    return handled
}

/// Whether a window titled exactly `title` (a dialog of the launched viewer) is shown on the
/// X display, as `xdotool search --onlyvisible` finds it.
func windowShown(_ title: String) -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["xdotool", "search", "--onlyvisible", "--name", "^\(title)$"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    let found = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return process.terminationStatus == 0 && !found.isEmpty
}
