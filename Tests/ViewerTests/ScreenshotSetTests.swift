import CAdw
import CGtk
import Foundation
import GtkBinding
@testable import Viewer
import XCTest

/// The screenshots of Docs/Screenshots, made by `scripts/screenshots` (which sets
/// `VIEWER_SCREENSHOTS` to the folder): World Cup at 1280 and 360 pixels, light and dark,
/// as a person sees it: the window, the Edit dialog, several teams selected, a team with a
/// name as long as the model allows (60 characters) selected, and a search; and To-Do with a
/// its lists' menus and the Rename dialog. Skipped unless asked for: they are pictures to look at, not checks.
final class ScreenshotSetTests: ViewerTestCase, @unchecked Sendable {
    func testTheDocumentationsScreenshots() throws { try MainActor.assumeIsolated {
        guard let folder = ProcessInfo.processInfo.environment["VIEWER_SCREENSHOTS"] else {
            throw XCTSkip("set VIEWER_SCREENSHOTS to a folder (scripts/screenshots does) to make the documentation's screenshots")
        }
        let styles = adw_style_manager_get_default()
        defer { adw_style_manager_set_color_scheme(styles, ADW_COLOR_SCHEME_DEFAULT) }
        for (scheme, look) in [(ADW_COLOR_SCHEME_FORCE_LIGHT, "light"), (ADW_COLOR_SCHEME_FORCE_DARK, "dark")] {
            adw_style_manager_set_color_scheme(styles, scheme)
            for width in [1280, 360] {
                let name = { (what: String) in URL(fileURLWithPath: "\(folder)/worldcup-\(what)-\(width)-\(look).png") }
                let window = try ViewerWindow(application: Self.application!.application,
                                              options: ViewerOptions(datasetName: "worldcup", storeFolder: try temporaryFolder(self).appendingPathComponent("\(look)-\(width)"),
                                                                     windowSize: (width, width == 360 ? 640 : 800)))
                windows.append(window)
                gtk_window_present(window.window.cast())
                MainLoop.iterate(until: { gtk_widget_get_mapped(window.listView) != 0 && !window.isLoading })
                let session = try XCTUnwrap(window.session)
                session.selection.select(window.object(titled: "Ghana"))
                MainLoop.iterate(for: 0.4)
                try Screenshot.save(window.window, to: name("window"))

                window.showEditDialog()
                MainLoop.iterate(for: 0.4)
                let dialog = try XCTUnwrap(window.dialog)
                try Screenshot.save(dialog.window, to: name("edit"))
                gtk_window_destroy(dialog.window.cast())

                // Selection mode: a range and a Ctrl-click.
                for (title, modify, extend) in [("Ghana", false, false), ("Australia", false, true), ("Brazil", true, false)] {
                    let position = try XCTUnwrap(window.position(ofRowTitled: title))
                    gtk_widget_activate_action_variant(window.listView, "list.select-item",
                                                       g_variant_new_tuple([g_variant_new_uint32(guint32(position)), g_variant_new_boolean(modify ? 1 : 0),
                                                                            g_variant_new_boolean(extend ? 1 : 0)], 3))
                }
                MainLoop.iterate(for: 0.4)
                try Screenshot.save(window.window, to: name("selection"))

                let long = try XCTUnwrap(window.object(titled: "Nigeria"))
                // As long as the model lets a name be (maxLength 60).
                try long.setValue(String(repeating: "Super Eagles of Nigeria ", count: 3).prefix(60).description, forKey: "teamName")
                try session.context.save()
                session.selection.select(long)
                MainLoop.iterate(for: 0.4)
                try Screenshot.save(window.window, to: name("long-name"))

                gtk_search_bar_set_search_mode(window.searchBar.opaque, 1)
                gtk_editable_set_text(OpaquePointer(window.searchEntry), "ia")
                MainLoop.iterate(until: { window.listLines.count < 20 && !window.fetchProgress.isBusy })
                MainLoop.iterate(for: 0.4)
                try Screenshot.save(window.window, to: name("search"))
                gtk_widget_set_visible(window.window, 0)
                try toDoShots(width: width, look: look, folder: folder)
            }
        }
    } }

    /// To-Do's lists, each header with its menu, and Rename List….
    @MainActor private func toDoShots(width: Int, look: String, folder: String) throws {
        let name = { (what: String) in URL(fileURLWithPath: "\(folder)/todo-\(what)-\(width)-\(look).png") }
        let window = try ViewerWindow(application: Self.application!.application,
                                      options: ViewerOptions(datasetName: "todo", storeFolder: try temporaryFolder(self).appendingPathComponent("todo-\(look)-\(width)"),
                                                             windowSize: (width, width == 360 ? 640 : 800)))
        windows.append(window)
        gtk_window_present(window.window.cast())
        MainLoop.iterate(until: { gtk_widget_get_mapped(window.listView) != 0 && !window.isLoading })
        MainLoop.iterate(for: 0.4)
        // Each header's ⋮ menu shows in the window (its popover is a surface of its own).
        try Screenshot.save(window.window, to: name("lists"))
        let header = try XCTUnwrap(window.factory?.headerWidget(named: "Home"))
        let menu = try XCTUnwrap(header.descendants.first { gtk_widget_has_css_class($0, "section-menu") != 0 })
        let home = try XCTUnwrap(window.session?.sectionObjectID(named: "Home")?.rowKey)
        gtk_widget_activate_action_variant(menu, "win.rename-section", g_variant_new_int64(gint64(home)))
        let dialog = try XCTUnwrap(window.sectionTitleDialog)
        gtk_editable_set_text(OpaquePointer(dialog.entry), "groceries")
        MainLoop.iterate(for: 0.4)
        try Screenshot.save(dialog.window, to: name("rename-list"))
        gtk_window_destroy(dialog.window.cast())
        gtk_widget_set_visible(window.window, 0)
    }
}
