import CAdw
import CGtk
import Foundation
import GtkBinding
import ObjectStore
import TestSupport
@testable import Viewer
import XCTest

/// The window as a GNOME app: search behind a toggle (Ctrl+F, typing, Escape), status pages,
/// toasts with Undo, the primary menu, About and Keyboard Shortcuts, and a layout that folds
/// to one pane down to 360 px wide without overlapping header widgets.
final class GnomeWindowTests: ViewerTestCase, @unchecked Sendable {
    func testSearchOpensWithCtrlFShowsNoResultsAndEscapeClearsAndClosesIt() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        XCTAssertEqual(gtk_search_bar_get_search_mode(window.searchBar.opaque), 0, "the search bar starts closed")
        gtk_search_bar_set_search_mode(window.searchBar.opaque, 1)
        gtk_editable_set_text(OpaquePointer(window.searchEntry), "zzq")
        XCTAssertTrue(MainLoop.iterate(until: { window.session?.rows.count == 0 }), "nothing matches")
        XCTAssertTrue(MainLoop.iterate(until: { String(cString: gtk_stack_get_visible_child_name(window.listStack.opaque)) == "empty" }))
        XCTAssertEqual(String(cString: adw_status_page_get_title(window.emptyPage.opaque)), "No Results")
        // Nothing is selected: the detail pane is a status page too (#24 item 7).
        XCTAssertEqual(window.detailLines, ["Nothing Selected", "Choose a row in the list to see all of it here."])

        // Escape in the entry ends the search: the text goes, the bar closes, every team is back.
        emit("stop-search", on: window.searchEntry, type: gtk_search_entry_get_type())
        XCTAssertTrue(MainLoop.iterate(until: { window.listLines.count == 37 }), "32 teams and 5 zones again: \(window.listLines.count)")
        XCTAssertEqual(gtk_search_bar_get_search_mode(window.searchBar.opaque), 0)
        XCTAssertEqual(String(cString: gtk_editable_get_text(OpaquePointer(window.searchEntry))), "")
        XCTAssertEqual(String(cString: gtk_stack_get_visible_child_name(window.listStack.opaque)), "list")
        XCTAssertTrue(window.searchButton.isVisible)
    } }

    /// Scrolled, the section of the first row shown stays at the top of the list (GTK 4.8 has
    /// no sticky headers); at the top, where the section's own header shows, it does not.
    func testTheCurrentSectionsHeaderStaysAtTheTopWhileScrolling() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        XCTAssertNil(window.stickyHeader.text, "at the top, Africa's own header shows")
        let scrolled = try XCTUnwrap(gtk_widget_get_parent(window.listView))
        let adjustment = gtk_scrolled_window_get_vadjustment(OpaquePointer(scrolled))
        for (value, section) in [(200.0, "Africa"), (700.0, "Europe"), (0.0, nil as String?)] {
            gtk_adjustment_set_value(adjustment, value)
            MainLoop.iterate(for: 0.2)
            XCTAssertEqual(window.stickyHeader.text, section, "scrolled to \(value):\n\(window.layoutDump)")
        }
        gtk_adjustment_set_value(adjustment, 700)
        MainLoop.iterate(for: 0.2)
        if let folder = ProcessInfo.processInfo.environment["VIEWER_SCREENSHOTS"] {
            try Screenshot.save(window.window, to: URL(fileURLWithPath: folder + "/sticky-header.png"))
        }
    } }

    func testADeleteShowsAToastWhoseUndoBringsTheTeamBack() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        session.selection.select(window.object(titled: "Ghana"))
        window.deleteSelection()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.shownToast, "“Ghana” deleted")
        XCTAssertNil(window.position(ofRowTitled: "Ghana"))
        gtk_widget_activate_action_variant(window.window, "win.undo", nil)  // the toast's Undo button
        XCTAssertTrue(MainLoop.iterate(until: { window.position(ofRowTitled: "Ghana") != nil }), "Undo brings Ghana back")
    } }

    func testTheSortOrdersAreRadioItemsOfThePrimaryMenu() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let model = try XCTUnwrap(gtk_menu_button_get_menu_model(window.menuButton.opaque))
        let sorts = try XCTUnwrap(g_menu_model_get_item_link(model, 0, "section"))
        defer { g_object_unref(UnsafeMutableRawPointer(sorts)) }
        XCTAssertEqual(g_menu_model_get_n_items(sorts), 2, "Most wins first, By name")
        XCTAssertEqual(gtk_menu_button_get_primary(window.menuButton.opaque), 1, "F10 opens it")
        gtk_widget_activate_action_variant(window.window, "win.sort", g_variant_new_int32(1))
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first?.hasSuffix("Algeria · Wins: 0") == true }))
        let state = try XCTUnwrap(g_action_get_state(window.sortAction))
        defer { g_variant_unref(state) }
        XCTAssertEqual(g_variant_get_int32(state), 1, "the radio item shows the sort in use")
    } }

    /// A new sort from the menu (the focus on the menu button, not in the list) moves the
    /// selected team far down: the list scrolls to it.
    func testANewSortScrollsTheSelectedRowIntoView() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        let spain = try XCTUnwrap(window.object(titled: "Spain"))
        try spain.setValue(9, forKey: "wins")
        try session.context.save()
        MainLoop.iterate(for: 0.1)
        session.selection.select(spain)
        window.keepFocusOnSelection()
        XCTAssertTrue(MainLoop.iterate(until: { self.isShown(spain, in: window) }), "Spain, first of Europe, is shown")
        gtk_widget_grab_focus(window.menuButton)
        gtk_widget_activate_action_variant(window.window, "win.sort", g_variant_new_int32(1))  // By name: Spain near Europe's end
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Europe").suffix(2).first == "> Spain · Wins: 9" }),
                      "\(window.rows(inSection: "Europe"))")
        XCTAssertTrue(MainLoop.iterate(until: { self.isShown(spain, in: window) }), "the list scrolled to Spain")
        let focus = gtk_root_get_focus(OpaquePointer(window.window))
        XCTAssertTrue(focus == window.menuButton || gtk_widget_is_ancestor(focus, window.menuButton) != 0, "the focus stays on the menu button")
    } }

    /// A search the selected team does not match selects another: when that one heads its
    /// section, the section's header shows above it (the list reloads, keeping its rows).
    func testASearchThatSelectsASectionsFirstMatchShowsItsHeader() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        session.controller.reloadThreshold = 1  // as a search of more than 20,000 rows does
        let algeria = try XCTUnwrap(window.object(titled: "Algeria"))
        session.selection.select(algeria)
        MainLoop.iterate(for: 0.2)
        gtk_editable_set_text(OpaquePointer(window.searchEntry), "an")
        XCTAssertTrue(MainLoop.iterate(until: { session.selection.selectedObject.map { $0 !== algeria } ?? false }), "another team is selected")
        MainLoop.iterate(for: 0.3)
        let selected = try XCTUnwrap(session.selection.selectedObject)
        let indexPath = try XCTUnwrap(session.controller.indexPath(for: selected))
        XCTAssertEqual(indexPath.item, 0, "the first match of its section is selected: \(window.listLines)")
        XCTAssertTrue(isShown(selected, in: window))
        let title = session.view.sectionTitle(forSectionName: session.controller.sections![indexPath.section].name)
        let header = window.listView.descendants.first { widget in
            gtk_widget_has_css_class(widget, "section-header") != 0 && gtk_widget_get_mapped(widget) != 0
                && String(cString: gtk_label_get_text(widget.opaque)) == title
        }
        var bounds = graphene_rect_t()
        XCTAssertTrue(header.map { gtk_widget_compute_bounds($0, window.listView, &bounds) != 0 && bounds.origin.y >= -1 } ?? false,
                      "the header of \(title) shows above the selected row")
    } }

    /// Ticking a to-do far from the selected row (which moves it among the done ones) leaves
    /// the list where the person scrolled it: it does not jump back to the selection.
    func testTickingABoxFarFromTheSelectionLeavesTheListWhereItIs() throws { try MainActor.assumeIsolated {
        let window = try openWindow("todo")
        gtk_window_set_default_size(window.window.cast(), 900, 400)
        MainLoop.iterate(for: 0.3)
        XCTAssertTrue(window.listLines.first.map { _ in window.listLines[1].hasPrefix(">") } ?? false, "the first item is selected: \(window.listLines)")
        let adjustment = try XCTUnwrap(gtk_scrollable_get_vadjustment(OpaquePointer(window.listView)))
        gtk_adjustment_set_value(adjustment, gtk_adjustment_get_upper(adjustment))  // to the end
        MainLoop.iterate(for: 0.3)
        let scrolled = gtk_adjustment_get_value(adjustment)
        XCTAssertGreaterThan(scrolled, 100, "the list scrolled away from the selection")
        // An unticked item on screen now, far from the selected first row.
        let row = try XCTUnwrap(window.listView.descendants.last { widget in
            widget.isA(gtk_check_button_get_type()) && gtk_widget_get_mapped(widget) != 0 && gtk_check_button_get_active(widget.cast()) == 0
        })
        gtk_check_button_set_active(row.cast(), 1)
        MainLoop.iterate(for: 0.5)
        XCTAssertEqual(gtk_adjustment_get_value(adjustment), scrolled, accuracy: 70, "the list stays where it was (at most a row's shift)")
        XCTAssertTrue(window.listLines[1].hasPrefix(">"), "the selection stays on the first item")
    } }

    /// A window without an application (as the benchmark opens one) has its `win.` actions
    /// too: a plain window is no action map, so they live in a group of its own.
    func testAWindowWithoutAnApplicationHasItsActions() throws { try MainActor.assumeIsolated {
        let window = try ViewerWindow(application: nil, options: ViewerOptions(datasetName: "worldcup", storeFolder: storeFolder))
        defer { gtk_window_destroy(window.window.cast()) }
        gtk_window_present(window.window.cast())
        MainLoop.iterate(until: { gtk_widget_get_mapped(window.listView) != 0 })
        gtk_widget_activate_action_variant(window.window, "win.sort", g_variant_new_int32(1))
        XCTAssertTrue(MainLoop.iterate(until: { self.sortState(window) == 1 }), "win.sort took the new order")
    } }

    @MainActor private func sortState(_ window: ViewerWindow) -> Int32? {
        guard let state = g_action_get_state(window.sortAction) else { return nil }
        defer { g_variant_unref(state) }
        return g_variant_get_int32(state)
    }

    /// Whether the row of `object` is on screen: mapped, inside the list's visible area.
    @MainActor private func isShown(_ object: ManagedObject, in window: ViewerWindow) -> Bool {
        guard let row = window.factory?.rowWidget(showing: object.objectID), gtk_widget_get_mapped(row) != 0 else { return false }
        var bounds = graphene_rect_t()
        guard gtk_widget_compute_bounds(row, window.listView, &bounds) != 0 else { return false }
        let top = bounds.origin.y, bottom = bounds.origin.y + bounds.size.height
        // The list view's own coordinates are its visible area (GtkListView scrolls itself).
        return top >= -1 && bottom <= Float(gtk_widget_get_height(window.listView)) + 1
    }

    func testAboutAndKeyboardShortcutsOpenTheirWindows() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        // The help (F1, and the menu's Help): the page of the source tree, run from it; opened
        // in the desktop's browser, or, with none (as here), a toast says where it is.
        gtk_widget_activate_action_variant(window.window, "win.help", nil)
        let page = try XCTUnwrap(window.shownHelp, "win.help opens the help page")
        XCTAssertTrue(try String(contentsOf: page, encoding: .utf8).contains("<h1>Fetched Results Help</h1>"), page.path)
        if let toast = window.shownToast {
            XCTAssertTrue(toast.hasPrefix("Cannot open the help (") && toast.hasSuffix("it is \(page.path)"), toast)
        }
        for (action, type) in [("win.about", adw_about_window_get_type()), ("win.show-help-overlay", gtk_shortcuts_window_get_type())] {
            gtk_widget_activate_action_variant(window.window, action, nil)
            XCTAssertTrue(MainLoop.iterate(until: { self.toplevel(ofType: type) != nil }), "\(action) opens its window")
            if let opened = toplevel(ofType: type) {
                if type == adw_about_window_get_type() {
                    // Run from the build tree, the icon is found in the source tree's data/icons.
                    let theme = gtk_icon_theme_get_for_display(gdk_display_get_default())
                    XCTAssertEqual(gtk_icon_theme_has_icon(theme, ViewerApplication.applicationID), 1, "the About window's icon is found")
                }
                if type == gtk_shortcuts_window_get_type() {
                    // Keys as they are printed ("Page Up", not GTK 4.8's "Page_Up"), and + for the counter.
                    let texts = labelTexts(in: UnsafeMutableRawPointer(opened).assumingMemoryBound(to: GtkWidget.self))
                    XCTAssertTrue(texts.contains("Page Up") && texts.contains("Page Down"), "\(texts)")
                    XCTAssertFalse(texts.contains { $0.contains("_") }, "no raw key names: \(texts)")
                    XCTAssertTrue(texts.contains("Add a win"), "\(texts)")
                    XCTAssertTrue(texts.contains("Help"), "F1 is listed: \(texts)")
                }
                gtk_window_destroy(opened)
            }
            MainLoop.iterate(for: 0.05)
        }
    } }

    /// The text of every label in `widget`, depth first.
    @MainActor private func labelTexts(in widget: UnsafeMutablePointer<GtkWidget>) -> [String] {
        var texts: [String] = []
        if g_type_check_instance_is_a(UnsafeMutableRawPointer(widget).assumingMemoryBound(to: GTypeInstance.self), gtk_label_get_type()) != 0,
           let text = gtk_label_get_text(OpaquePointer(widget)) {
            texts.append(String(cString: text))
        }
        var child = gtk_widget_get_first_child(widget)
        while let current = child {
            texts += labelTexts(in: current)
            child = gtk_widget_get_next_sibling(current)
        }
        return texts
    }

    /// A 500-character team name with no space in it, written by another program: with the
    /// team selected the window keeps its size, the header's buttons stay inside it, the
    /// detail pane wraps the name, and the delete toast names the team in a line. (The
    /// window used to grow to about 7,000 px, pushing search, menu, edit, delete and the
    /// details off-screen.)
    func testAVeryLongNameKeepsTheWindowItsSize() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        gtk_window_set_default_size(window.window.cast(), 900, 640)
        XCTAssertTrue(MainLoop.iterate(until: { abs(gtk_widget_get_width(window.window) - 900) < 40 }))
        let long = String(repeating: "W", count: 500)
        let store = try XCTUnwrap(window.session?.context.store.url)
        try sqlite3(store, "UPDATE Team SET teamName = '\(long)' WHERE teamName = 'Ghana'")
        XCTAssertTrue(MainLoop.iterate(until: { window.object(titled: long) != nil }), "the rename shows")
        window.session?.selection.select(window.object(titled: long))
        MainLoop.iterate(for: 0.5)
        let width = gtk_widget_get_width(window.window)
        XCTAssertLessThan(abs(width - 900), 40, "the window keeps its width: \(width) px")
        for (name, button) in [("Edit", window.editButton), ("Delete", window.deleteButton)] {
            var bounds = graphene_rect_t()
            XCTAssertNotEqual(gtk_widget_compute_bounds(button, window.window, &bounds), 0, name)
            XCTAssertLessThanOrEqual(bounds.origin.x + bounds.size.width, Float(width) + 1, "\(name) is inside the window")
        }
        XCTAssertTrue(window.window.descendants.contains { widget in
            String(cString: gtk_widget_get_css_name(widget)) == "label" && gtk_widget_get_mapped(widget) != 0
                && String(cString: gtk_label_get_text(widget.opaque)) == long && gtk_widget_get_width(widget) < width
        }, "the detail pane shows the whole name, wrapped")
        emit("clicked", on: window.deleteButton, type: gtk_button_get_type())
        XCTAssertTrue(MainLoop.iterate(until: { window.shownToast != nil }), "a toast")
        XCTAssertEqual(window.shownToast, "“\(String(repeating: "W", count: 39))…” deleted")
    } }

    /// At 360 px the window folds to the list with its header; a click on a row shows its
    /// details with a Back button, which returns to the list. At 360 and at 1280 px no two
    /// widgets of a header bar overlap.
    func testAt360PixelsTheWindowFoldsToOnePaneAndTheHeaderWidgetsDoNotOverlap() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        for width: Int32 in [1280, 360] {
            gtk_window_set_default_size(window.window.cast(), width, 640)
            gtk_window_unmaximize(window.window.cast())
            XCTAssertTrue(MainLoop.iterate(until: { abs(gtk_widget_get_width(window.window) - width) < 40 }),
                          "the window is \(width) px wide: \(gtk_widget_get_width(window.window))")
            MainLoop.iterate(for: 0.3)
            XCTAssertEqual(adw_leaflet_get_folded(window.leaflet.opaque) != 0, width == 360, "folded at \(width) px")
            for header in window.window.descendants where String(cString: gtk_widget_get_css_name(header)) == "headerbar" && gtk_widget_get_mapped(header) != 0 {
                let boxes = header.descendants.filter {
                    gtk_widget_get_mapped($0) != 0 && (String(cString: gtk_widget_get_css_name($0)) == "button" || String(cString: gtk_widget_get_css_name($0)) == "dropdown")
                }.compactMap { widget -> (Widget, graphene_rect_t)? in
                    var bounds = graphene_rect_t()
                    return gtk_widget_compute_bounds(widget, window.window, &bounds) != 0 ? (widget, bounds) : nil
                }
                XCTAssertGreaterThan(boxes.count, 2)
                for (i, a) in boxes.enumerated() {
                    for b in boxes[(i + 1)...] where gtk_widget_is_ancestor(a.0, b.0) == 0 && gtk_widget_is_ancestor(b.0, a.0) == 0 {
                        var a1 = a.1, b1 = b.1
                        XCTAssertFalse(graphene_rect_intersection(&a1, &b1, nil), "at \(width) px, two header widgets overlap")
                        XCTAssertLessThanOrEqual(a.1.origin.x + a.1.size.width, Float(gtk_widget_get_width(window.window)) + 1, "inside the window")
                    }
                }
            }
        }
        XCTAssertEqual(adw_leaflet_get_visible_child(window.leaflet.opaque), window.listPane, "the list shows first")
        XCTAssertTrue(window.backButton.isVisible)
        // The details of the selected row (a click on a row shows them), then Back.
        window.session?.selection.select(window.object(titled: "Ghana"))
        adw_leaflet_set_visible_child(window.leaflet.opaque, window.detailPane)
        MainLoop.iterate(for: 0.3)
        emit("clicked", on: window.backButton, type: gtk_button_get_type())
        XCTAssertTrue(MainLoop.iterate(until: { adw_leaflet_get_visible_child(window.leaflet.opaque) == window.listPane }), "Back shows the list")
    } }

    private func toplevel(ofType type: GType) -> UnsafeMutablePointer<GtkWindow>? {
        let toplevels = gtk_window_get_toplevels()!
        for index in 0..<g_list_model_get_n_items(toplevels) {
            let item = g_list_model_get_item(toplevels, index)!
            g_object_unref(item)
            if g_type_check_instance_is_a(item.assumingMemoryBound(to: GTypeInstance.self), type) != 0, gtk_widget_get_visible(item.assumingMemoryBound(to: GtkWidget.self)) != 0 {
                return item.assumingMemoryBound(to: GtkWindow.self)
            }
        }
        return nil
    }
}

/// Emits the action signal `name` (no arguments) of `widget`, an instance of `type`, as GTK
/// does (`g_signal_emit_by_name` is variadic, so through `g_signal_emitv`): `stop-search` is
/// what Escape emits, `clicked` how a button's gesture ends.
@MainActor private func emit(_ name: String, on widget: Widget, type: GType) {
    var instance = GValue()
    g_value_init(&instance, type)
    g_value_set_object(&instance, UnsafeMutableRawPointer(widget))
    g_signal_emitv(&instance, g_signal_lookup(name, type), 0, nil)
    g_value_unset(&instance)
}
